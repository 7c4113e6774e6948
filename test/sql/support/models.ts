// Runs rules on FileModels, per file and then as a project, the way `pgq-audit
// scan` does, so the settings rules can be tested on the facts the host front
// ends fill (SqlSite.params, ConnectionConfig.reuse/driverReset, callback
// roles) with models built by hand, next to .sql files read by the SQL front end.
import { countSeverities, type FileResult, type Finding } from '../../../src/engine/findings.ts';
import { collectProjectFacts, runProjectRules, type ProjectFacts } from '../../../src/engine/project-pass.ts';
import { activeRules, type RuleSettings } from '../../../src/engine/rule-config.ts';
import { rules as allRules } from '../../../rules/index.ts';
import { runRules } from '../../../src/engine/run-rules.ts';
import { sqlFrontEnd } from '../../../src/languages/sql/index.ts';
import { emptyFileModel, type ConnectionConfig, type FileModel, type SqlSite } from '../../../src/model/index.ts';
import { analyzeSql, loadSqlParser } from '../../../src/sql/index.ts';

await loadSqlParser();

export interface Found {
  file: string;
  messageId: string;
  line: number;
  message: string;
}

/** A TypeScript file whose text is `sql` and whose one site runs it, with the given placement. */
export function hostModel(
  file: string,
  sql: string,
  site: Partial<Omit<SqlSite, 'span' | 'analysis'>> = {},
  connections: ConnectionConfig[] = [],
): FileModel {
  const model = emptyFileModel(file, 'typescript', sql);
  model.sites.push({
    span: { start: 0, end: sql.length },
    analysis: analyzeSql(sql),
    scope: site.scope ?? { kind: 'unknown' },
    connection: site.connection ?? { kind: 'pooled-client', configId: connections[0]?.id },
    driver: site.driver ?? 'pg',
    ...(site.params ? { params: site.params } : {}),
    ...(site.callback ? { callback: site.callback } : {}),
    ...(site.functionName ? { functionName: site.functionName } : {}),
  });
  model.connections.push(...connections);
  return model;
}

export function pool(id: string, extra: Partial<ConnectionConfig> = {}): ConnectionConfig {
  return { id, driver: 'pg', kind: 'pool', span: { start: 0, end: 1 }, preparedStatements: 'no', autocommit: true, callbacks: [], ...extra };
}

export const sqlModel = (file: string, text: string): FileModel => sqlFrontEnd.parse(text, file, {});

/** Every finding of `ruleId` (on, with `options`) over the models: per-file findings and the project pass. */
export function runOn(ruleId: string, models: FileModel[], options?: Record<string, unknown>): Found[] {
  const settings: RuleSettings = {};
  for (const { rule } of activeRules()) settings[rule.id] = rule.id === ruleId ? { severity: 'error', options } : 'off';
  const active = activeRules(settings, allRules);
  const results: FileResult[] = [];
  const facts = new Map<string, ProjectFacts>();
  for (const model of models) {
    results.push(countSeverities({ filePath: model.file, messages: runRules(model, active), errorCount: 0, warningCount: 0 }));
    const collected = collectProjectFacts(model, active);
    if (collected) facts.set(model.file, collected);
  }
  runProjectRules(active, facts, results);
  return results.flatMap((r) => r.messages.map((m: Finding) => ({ file: r.filePath, messageId: m.messageId ?? String(m.ruleId), line: m.line, message: m.message })));
}

export const brief = (found: Found[]) => found.map((f) => `${f.file}:${f.line} ${f.messageId}`);
