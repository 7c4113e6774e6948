// SARIF 2.1.0 as GitHub code scanning reads it: one run, every rule in
// tool.driver.rules (id pgq/<rule-id>, descriptions, help from its doc page,
// default level), results with repository-relative locations. A message about
// a file as a whole (a parse error, a skipped file) is both a result of a
// `pgq-audit/...` rule, so code scanning shows what failed the run, and a tool
// execution notification, at the severity every other format gives it. Columns are UTF-16 code units, 1-based, the
// end exclusive — the same as findings carry them.
import { isAbsolute, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Sarif from 'sarif';
import type { DatabaseObject, FileResult, Finding } from '../engine/findings.ts';
import { fingerprints } from '../baseline/fingerprint.ts';
import { VERSION } from '../version.ts';
import { allRuleInfo, docPage, docsUrl, fullDescription, informationUri } from './rule-docs.ts';
import { sourceOf } from './source.ts';

export interface SarifContext {
  /** The repository root: locations are relative to it. */
  root: string;
}

const SRCROOT = '%SRCROOT%';

export function formatSarif(results: readonly FileResult[], context: SarifContext): string {
  const infos = allRuleInfo();
  const rules: Sarif.ReportingDescriptor[] = infos.map((info) => {
    const page = docPage(info.id);
    return {
      id: `pgq/${info.id}`,
      name: info.id,
      shortDescription: { text: info.description },
      fullDescription: { text: fullDescription(info, page) },
      helpUri: docsUrl(info.id),
      help: { text: `${info.description}. See ${docsUrl(info.id)}`, ...(page ? { markdown: page } : {}) },
      defaultConfiguration: { level: level(info.defaultSeverity === 'error' ? 2 : 1) },
      properties: { tags: info.builtIn ? ['pgq-audit', 'suppression'] : ['pgq-audit', 'correctness', 'multi-tenant'], precision: 'high' },
    };
  });
  const index = new Map(infos.map((info, i) => [info.id, i]));
  const fileRules = new Map<string, number>();
  const sarifResults: Sarif.Result[] = [];
  const notifications: Sarif.Notification[] = [];
  for (const result of results) {
    const artifactLocation = result.object ? objectArtifact(result.object) : artifact(result.filePath, context.root);
    const prints = fingerprints(result.messages, sourceOf(result));
    result.messages.forEach((finding, i) => {
      const location: Sarif.Location = { physicalLocation: { artifactLocation, region: region(finding) } };
      if (result.object) location.logicalLocations = [logicalLocation(result.object)];
      if (finding.ruleId === null) {
        notifications.push({ level: level(finding.severity), message: { text: finding.message }, locations: [location] });
        const kind = fileMessageKind(finding);
        if (!fileRules.has(kind.id)) {
          fileRules.set(kind.id, rules.length);
          rules.push({
            id: kind.id,
            name: kind.id.slice('pgq-audit/'.length),
            shortDescription: { text: kind.description },
            fullDescription: { text: kind.description },
            help: { text: kind.description },
            defaultConfiguration: { level: level(finding.severity) },
            properties: { tags: ['pgq-audit', 'tool'] },
          });
        }
        sarifResults.push({
          ruleId: kind.id,
          ruleIndex: fileRules.get(kind.id),
          level: level(finding.severity),
          message: { text: finding.message },
          locations: [location],
          partialFingerprints: { 'pgqAuditFingerprint/v1': `${prints[i].fingerprint}:${prints[i].occurrence}` },
        });
        return;
      }
      sarifResults.push({
        ruleId: `pgq/${finding.ruleId}`,
        ...(index.has(finding.ruleId) ? { ruleIndex: index.get(finding.ruleId) } : {}),
        level: level(finding.severity),
        message: { text: finding.message },
        locations: [location],
        partialFingerprints: { 'pgqAuditFingerprint/v1': `${prints[i].fingerprint}:${prints[i].occurrence}` },
      });
    });
  }
  const log: Sarif.Log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'pgq-audit', version: VERSION, semanticVersion: VERSION, informationUri: informationUri(), rules } },
        originalUriBaseIds: { [SRCROOT]: { uri: pathToFileURL(context.root.endsWith(sep) ? context.root : `${context.root}${sep}`).href } },
        columnKind: 'utf16CodeUnits',
        invocations: [{ executionSuccessful: true, toolExecutionNotifications: notifications }],
        results: sarifResults,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

/** The stand-in rule of a message about a file as a whole (ruleId null), by what it says. */
function fileMessageKind(finding: Finding): { id: string; description: string } {
  switch (finding.messageId) {
    case 'skipped':
      return { id: 'pgq-audit/file-skipped', description: 'A file or object pgq-audit did not analyse (a bundle by its shape, a file over the size cap, or one stopped by the wall-clock time budget or memory): nothing in it was checked' };
    case 'not-postgresql':
      return { id: 'pgq-audit/not-postgresql', description: 'A .sql file that is not PostgreSQL (a template, another database\'s SQL): not checked' };
    case 'not-python3':
      return { id: 'pgq-audit/not-python3', description: 'A .py file in Python 2: pgq-audit reads Python 3, so it was not checked' };
    case 'newer-postgresql':
      return { id: 'pgq-audit/newer-postgresql', description: 'A statement in the syntax of a PostgreSQL newer than the parser reads: valid there, not checked' };
    case 'sql-syntax':
      return { id: 'pgq-audit/sql-syntax', description: 'SQL in a string of the code that does not parse' };
    case 'internal-error':
      return { id: 'pgq-audit/internal-error', description: 'A rule of pgq-audit failed: its findings there are missing' };
    default:
      return { id: 'pgq-audit/parse-error', description: 'A file pgq-audit could not parse or read: what did not parse was not checked' };
  }
}

function level(severity: 1 | 2): Sarif.ReportingConfiguration.level {
  return severity === 2 ? 'error' : 'warning';
}

function region(finding: Finding): Sarif.Region {
  return { startLine: finding.line, startColumn: finding.column, endLine: finding.endLine, endColumn: finding.endColumn };
}

/** Repository-relative URI under %SRCROOT%; a file outside the repository keeps its absolute file: URI. */
function artifact(file: string, root: string): Sarif.ArtifactLocation {
  const rel = relative(root, file);
  if (rel.startsWith('..') || isAbsolute(rel)) return { uri: pathToFileURL(file).href };
  return { uri: rel.split(sep).map(encodeURIComponent).join('/'), uriBaseId: SRCROOT };
}

/**
 * A database object has no file: GitHub code scanning still needs a
 * repository-relative physical location, so it gets a stand-in path (the
 * region is in the object's definition text), and the object itself is the
 * logical location.
 */
function objectArtifact(object: DatabaseObject): Sarif.ArtifactLocation {
  return { uri: object.artifactPath.split('/').map(encodeURIComponent).join('/'), uriBaseId: SRCROOT };
}

function logicalLocation(object: DatabaseObject): Sarif.LogicalLocation {
  return {
    name: object.name,
    fullyQualifiedName: object.fullyQualifiedName,
    kind: object.kind === 'function' || object.kind === 'procedure' ? 'function' : 'resource',
    properties: { databaseObjectKind: object.kind, display: object.display },
  };
}
