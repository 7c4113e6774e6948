// `lintDatabase(options)`: the programmatic entry of `pgq-audit db`. Reads the
// catalog in one read-only transaction, turns each object into a model
// through the SQL front end (the analyzer the .sql files use), runs the same
// rules on it, lends the cross-file rules the facts of a repository when
// one is given (its claims make a table a queue), and applies suppression
// comments found in routine bodies.
import { countSeverities, type FileResult } from '../engine/findings.ts';
import { collectProjectFacts, runProjectRules, type ProjectFacts } from '../engine/project-pass.ts';
import { activeRules, type ActiveRule, type RuleSettings } from '../engine/rule-config.ts';
import { runRules } from '../engine/run-rules.ts';
import { sqlFrontEnd } from '../languages/sql/index.ts';
import { loadFrontEnds } from '../languages/registry.ts';
import type { CatalogRole, CatalogTable, FileModel, Severity } from '../model/index.ts';
import { analysisConfig, fileMessage, type FileAnalysis } from '../scan/analysis.ts';
import { analyseInProcess, scanFileText } from '../scan/analyze-file.ts';
import { AnalysisPool, autoThreads, autoUsesWorkers, type PoolOutcome } from '../scan/pool.ts';
import { DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_BUDGET } from '../scan/scan.ts';
import { rules as allRules } from '../../rules/index.ts';
import { scan } from '../scan/scan.ts';
import type { FileSelection } from '../scan/select-files.ts';
import { loadSqlParser } from '../sql/index.ts';
import { applySuppressions, readDirectives, type FileDirectives } from '../suppressions/index.ts';
import { readCatalog, type CatalogOptions, type CatalogSnapshot } from './catalog.ts';
import { describeTarget, withReadOnlySession, type ConnectOptions, type Target } from './connection.ts';
import { catalogObjects, type CatalogObjects, type DbObject } from './objects.ts';

export interface LintDatabaseOptions extends CatalogOptions, Partial<ConnectOptions> {
  rules?: RuleSettings;
  /** A repository to read facts from (its claims, its policies): scanned like `pgq-audit scan <project>`. */
  project?: string;
  /** For the project scan: config ignores and the like. */
  projectSelection?: FileSelection;
  queryFunctions?: readonly string[];
  reportUnusedSuppressions?: Severity;
  cwd?: string;
  /** Worker threads for the routines, as scan's --concurrency (default 'auto'; small catalogs run in-process). */
  concurrency?: number | 'auto' | 'off';
  /** Per-routine time budget in ms, as scan's --time-budget (default 10,000; 0 for none). */
  timeBudget?: number;
}

export interface LintDatabaseStats {
  target: string;
  database: string;
  serverVersion: string;
  schemas: string[];
  objects: { functions: number; procedures: number; otherLanguages: number; policies: number; tables: number; settings: number };
  /** Files of the project that lent facts. */
  projectFiles: number;
  /** Worker threads the routines were analysed on; 0 when in-process. */
  threads: number;
  timings: { catalog: number; analyse: number; project: number; total: number };
}

export interface LintDatabaseResult {
  results: FileResult[];
  errorCount: number;
  warningCount: number;
  stats: LintDatabaseStats;
}

export const DEFAULT_STATEMENT_TIMEOUT = 30_000;
export const DEFAULT_CONNECT_TIMEOUT = 10_000;

/**
 * Cross-file rules that run over the database alone: they report only what
 * the objects they see prove (a policy on a table a routine claims, a
 * default of a setting a policy reads). The others decide on what is
 * missing (no dead sweep, no heartbeat), which the database alone cannot
 * tell: the worker's code may have it. They run when --project is given.
 */
const DATABASE_ALONE_RULES: ReadonlySet<string> = new Set(['no-tenant-policy-on-queue', 'no-tenant-setting-default']);

export async function lintDatabase(options: LintDatabaseOptions): Promise<LintDatabaseResult> {
  const started = performance.now();
  const active = activeRules(options.rules, allRules);
  // Routines are analysed as .sql files (scanFileText): the SQL front end, loaded as a scan loads it.
  const parserLoaded = Promise.all([loadSqlParser(), loadFrontEnds(['sql'])]);
  let target: Target | undefined;
  const snapshot = await withReadOnlySession(
    { url: options.url, statementTimeout: options.statementTimeout ?? DEFAULT_STATEMENT_TIMEOUT, connectTimeout: options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT },
    async (session) => {
      target = session.target;
      return readCatalog(session, options);
    },
  );
  const catalogAt = performance.now();
  await parserLoaded;

  const objects = catalogObjects(snapshot);
  const { analyses: routines, threads } = await analyseRoutines(objects.routines, active, options);
  const { results, facts, directives } = analyseObjects(snapshot, active, { objects, routines });
  const analysedAt = performance.now();

  let projectFiles = 0;
  if (options.project !== undefined) {
    const repository = await scan({
      paths: [options.project],
      cwd: options.cwd,
      rules: options.rules,
      queryFunctions: options.queryFunctions,
      selection: options.projectSelection,
      keepFacts: true,
    });
    for (const [file, fileFacts] of repository.facts ?? []) {
      facts.set(file, lentFacts(fileFacts));
      projectFiles++;
    }
  }
  const projectActive = options.project !== undefined ? active : active.filter((a) => DATABASE_ALONE_RULES.has(a.rule.id));
  runProjectRules(projectActive, facts, results);
  const unused = { off: 0, warn: 1, error: 2 }[options.reportUnusedSuppressions ?? 'warn'] as 0 | 1 | 2;
  for (const result of results) {
    applySuppressions(result, directives.get(result.filePath), active, { unused });
    if (result.messages.length === 0) delete result.source;
  }
  const done = performance.now();

  const count = (kind: string) => results.filter((r) => r.object?.kind === kind).length;
  return {
    results,
    errorCount: results.reduce((n, r) => n + r.errorCount, 0),
    warningCount: results.reduce((n, r) => n + r.warningCount, 0),
    stats: {
      target: target ? describeTarget(target) : '',
      database: snapshot.database,
      serverVersion: snapshot.serverVersion,
      schemas: snapshot.schemas,
      objects: {
        functions: count('function'),
        procedures: count('procedure'),
        otherLanguages: snapshot.otherRoutines,
        policies: count('policy'),
        tables: count('table'),
        settings: count('role') + count('database'),
      },
      projectFiles,
      threads,
      timings: { catalog: catalogAt - started, analyse: analysedAt - catalogAt, project: done - analysedAt, total: done - started },
    },
  };
}

/**
 * Every object through the SQL front end and the per-file rules; tables and
 * the app's role also get their catalog facts (owner, row level security,
 * their policies as the analyzer read them).
 */
export function analyseObjects(
  snapshot: CatalogSnapshot,
  active: readonly ActiveRule[],
  done: { objects?: CatalogObjects; routines?: ReadonlyMap<string, FileAnalysis> } = {},
) {
  const objects = done.objects ?? catalogObjects(snapshot);
  const results: FileResult[] = [];
  const facts = new Map<string, ProjectFacts>();
  const directives = new Map<string, FileDirectives>();
  const analyse = (object: DbObject, extend?: (model: FileModel) => void): FileModel => {
    const model = sqlFrontEnd.parse(object.text, object.filePath, {});
    extend?.(model);
    const result = countSeverities({ filePath: object.filePath, object: object.object, messages: [], errorCount: 0, warningCount: 0, source: object.text });
    results.push(result);
    try {
      result.messages = runRules(model, active);
      const collected = collectProjectFacts(model, active);
      if (collected) facts.set(object.filePath, collected);
      const found = readDirectives(model);
      if (found) directives.set(object.filePath, found);
    } catch (error) {
      // A bug of ours on one object must not cost the user the rest of the database.
      result.messages = [fileMessage(`pgq-audit failed on this object: ${(error as Error)?.stack ?? error}`, 2, true)];
    }
    countSeverities(result);
    return model;
  };

  const config = done.routines ? undefined : analysisConfig(active, allRules);
  for (const routine of objects.routines) {
    // Routines are plain SQL texts: the scan's own per-file analysis, here or (many of them) on its worker threads.
    const analysis = done.routines?.get(routine.filePath) ?? scanFileText(routineFile(routine), routine.text, config!);
    const result = countSeverities({ filePath: routine.filePath, object: routine.object, messages: [...analysis.messages], errorCount: 0, warningCount: 0, source: routine.text });
    results.push(result);
    if (analysis.facts) facts.set(routine.filePath, analysis.facts);
    if (analysis.directives) directives.set(routine.filePath, analysis.directives);
  }
  // Which settings each policy reads, as the analyzer read its USING and WITH CHECK.
  const policiesOf = new Map<string, { name: string; settingsRead: string[] }[]>();
  for (const policy of objects.policies) {
    const model = analyse(policy);
    const settingsRead = new Set<string>();
    for (const site of model.sites) for (const statement of site.analysis.statements) {
      if (statement.kind !== 'CreatePolicyStmt') continue;
      for (const read of statement.settingReads) if (read.setting) settingsRead.add(read.setting);
    }
    const key = `${policy.row.schema}.${policy.row.table}`;
    policiesOf.set(key, [...(policiesOf.get(key) ?? []), { name: policy.row.name, settingsRead: [...settingsRead] }]);
  }
  const rlsTables: CatalogRole['rlsTables'] = [];
  for (const table of objects.tables) {
    const policies = policiesOf.get(`${table.row.schema}.${table.row.name}`) ?? [];
    if (table.row.rls) rlsTables.push({ name: table.object.fullyQualifiedName, policies });
    const fact: CatalogTable = {
      name: table.object.fullyQualifiedName,
      rowSecurity: table.row.rls,
      forceRowSecurity: table.row.force,
      owner: table.row.owner,
      policies,
      span: table.span,
    };
    if (table.row.app_role_owns && snapshot.role) {
      fact.ownedByAppRole = table.row.app_role_owns === 'owner' ? { role: snapshot.role.name } : { role: snapshot.role.name, via: table.row.owner };
    }
    analyse(table, (model) => {
      model.catalog = { tables: [fact], roles: [] };
    });
  }
  for (const setting of objects.settings) {
    const role = snapshot.role;
    const span = setting.attributesSpan;
    analyse(setting, (model) => {
      if (role && span) model.catalog = { tables: [], roles: [{ name: role.name, superuser: role.superuser, bypassRls: role.bypass_rls, rlsTables, span }] };
    });
  }
  results.sort((a, b) => a.filePath.localeCompare(b.filePath));
  return { results, facts, directives };
}

/** Routines at or under this count are analysed in-process: starting workers costs more than it saves. */
const IN_PROCESS_MAX_ROUTINES = 200;
/** Routines per worker task: one message each way per batch (pool.ts). */
const WORKER_BATCH = 32;

/** The name a routine is analysed under: its pseudo-path, as a .sql file (the front end is chosen by extension). */
const routineFile = (routine: DbObject) => `${routine.filePath}.sql`;

/** The scan's per-file analysis of every routine, on worker threads with a time budget when there are many. */
async function analyseRoutines(
  routines: readonly DbObject[],
  active: readonly ActiveRule[],
  options: LintDatabaseOptions,
): Promise<{ analyses: Map<string, FileAnalysis>; threads: number }> {
  const config = analysisConfig(active, allRules, options.queryFunctions);
  const out = new Map<string, FileAnalysis>();
  const concurrency = options.concurrency ?? 'auto';
  const timeBudget = options.timeBudget ?? DEFAULT_TIME_BUDGET;
  const record = (routine: DbObject, outcome: PoolOutcome) => {
    if (outcome.kind === 'done') out.set(routine.filePath, outcome.analysis);
    else if (outcome.kind === 'failed') out.set(routine.filePath, { messages: [fileMessage(`pgq-audit failed on this object: ${outcome.message}`, 2, true)] });
    else {
      const why = outcome.kind === 'timeout' ? `took longer than ${timeBudget} ms (the per-object time budget)` : `needed more than ${DEFAULT_MEMORY_LIMIT} MB of memory`;
      out.set(routine.filePath, { messages: [fileMessage(`Object skipped: analysing it ${why}, so it was stopped and nothing else is reported for it.`, 1, false, 'skipped')] });
    }
  };
  const here = (batch: readonly DbObject[]) => analyseInProcess(timeBudget, batch.map((routine) => ({ file: routineFile(routine), text: routine.text })), config);
  // On two cores a worker does not pay (pool.ts): 10,000 routines took 8.1 s on one, 5.8 s here.
  if (concurrency === 'off' || (concurrency === 'auto' && !autoUsesWorkers()) || routines.length <= IN_PROCESS_MAX_ROUTINES) {
    const outcomes = await here(routines);
    for (const [i, routine] of routines.entries()) record(routine, outcomes[i]);
    return { analyses: out, threads: 0 };
  }
  const pool = new AnalysisPool({ threads: concurrency === 'auto' ? autoThreads() : concurrency, timeBudget, memoryLimit: DEFAULT_MEMORY_LIMIT });
  try {
    const batches: DbObject[][] = [];
    for (let i = 0; i < routines.length; i += WORKER_BATCH) batches.push(routines.slice(i, i + WORKER_BATCH));
    await Promise.all(
      batches.map(async (batch) => {
        let outcomes: PoolOutcome[];
        try {
          outcomes = await pool.analyzeBatch(batch.map((routine) => ({ file: routineFile(routine), text: routine.text })), config);
        } catch {
          // The workers could not start: analyse here.
          outcomes = await here(batch);
        }
        for (const [i, routine] of batch.entries()) record(routine, outcomes[i]);
      }),
    );
  } finally {
    await pool.destroy();
  }
  return { analyses: out, threads: pool.threads };
}

/**
 * What a repository may tell about the database: its claims make a table a
 * queue, its policies say which settings carry the tenant. Whether row level
 * security is on is the catalog's to say (a migration may not have run, or
 * been undone by hand), so the repository's ENABLE ROW LEVEL SECURITY is not lent.
 */
function lentFacts(facts: ProjectFacts): ProjectFacts {
  const queue = facts['no-tenant-policy-on-queue'] as { rls?: unknown[] } | undefined;
  if (!queue || !Array.isArray(queue.rls)) return facts;
  return { ...facts, 'no-tenant-policy-on-queue': { ...queue, rls: [] } };
}
