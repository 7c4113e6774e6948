// SARIF 2.1.0 as GitHub code scanning reads it: one run, every rule in
// tool.driver.rules (id pgq/<rule-id>, descriptions, help from its doc page,
// default level), results with repository-relative locations, parse errors as
// tool execution notifications. Columns are UTF-16 code units, 1-based, the
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
  const sarifResults: Sarif.Result[] = [];
  const notifications: Sarif.Notification[] = [];
  for (const result of results) {
    const artifactLocation = result.object ? objectArtifact(result.object) : artifact(result.filePath, context.root);
    const prints = fingerprints(result.messages, sourceOf(result));
    result.messages.forEach((finding, i) => {
      const location: Sarif.Location = { physicalLocation: { artifactLocation, region: region(finding) } };
      if (result.object) location.logicalLocations = [logicalLocation(result.object)];
      if (finding.ruleId === null) {
        notifications.push({ level: 'error', message: { text: finding.message }, locations: [location] });
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
