// --format sarif, validated against the SARIF 2.1.0 JSON schema that
// Microsoft's @microsoft/jest-sarif package ships (a devDependency; used from
// node_modules, not copied) and checked for what GitHub code scanning reads.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import ajvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { rules } from '../../rules/index.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { parseJson, project } from './project.ts';

const schemaPath = join(repoRoot, 'node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
const schemaText = readFileSync(schemaPath, 'utf8');
// Both are CommonJS modules whose function is also their `default` export.
// unicodeRegExp: false, because one pattern of the schema (for language tags) is not valid with the u flag.
const ajv = new ajvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
ajvFormats.default(ajv);
const validate = ajv.compile(JSON.parse(schemaText));

function assertValid(log: unknown): void {
  const ok = validate(log);
  assert.ok(ok, `SARIF schema errors:\n${JSON.stringify(validate.errors, null, 2)}`);
}

test('the schema is the SARIF 2.1.0 schema of @microsoft/jest-sarif 1.0.0-beta.0', () => {
  assert.equal(createHash('sha256').update(schemaText).digest('hex'), '2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8');
  assert.match(JSON.parse(schemaText).title, /SARIF\) Version 2\.1\.0/);
});

test('the validator rejects what GitHub would reject: it can fail', () => {
  const run = runCli(['scan', 'fixtures/sql', '--format', 'sarif']);
  const log = JSON.parse(run.stdout);
  assertValid(log);
  const bad = structuredClone(log);
  bad.runs[0].results[0].level = 'fatal';
  assert.equal(validate(bad), false);
  const noLine = structuredClone(log);
  noLine.runs[0].results[0].locations[0].physicalLocation.region.startLine = 0;
  assert.equal(validate(noLine), false);
  const noDriver = structuredClone(log);
  delete noDriver.runs[0].tool.driver.name;
  assert.equal(validate(noDriver), false);
});

test('SARIF of the fixtures is valid SARIF 2.1.0 and says what GitHub code scanning needs', () => {
  const run = runCli(['scan', 'fixtures/sql', '--format', 'sarif']);
  assert.equal(run.code, 1, run.stderr);
  const log = JSON.parse(run.stdout);
  assertValid(log);
  assert.equal(log.version, '2.1.0');
  assert.equal(log.runs.length, 1);
  const [sarifRun] = log.runs;

  const { driver } = sarifRun.tool;
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(driver.name, 'pgq-audit');
  assert.equal(driver.version, pkg.version);
  assert.match(driver.informationUri, /^https:\/\//);

  // One entry per rule, pgq/<id>, descriptions, help page, default level.
  const ids = driver.rules.map((r: { id: string }) => r.id);
  for (const rule of rules) assert.ok(ids.includes(`pgq/${rule.id}`), `rules[] has pgq/${rule.id}`);
  assert.ok(ids.includes('pgq/invalid-suppression') && ids.includes('pgq/unused-suppression'));
  assert.equal(new Set(ids).size, ids.length, 'rule ids are unique');
  for (const rule of rules) {
    const entry = driver.rules.find((r: { id: string }) => r.id === `pgq/${rule.id}`);
    assert.equal(entry.shortDescription.text, rule.description);
    assert.ok(entry.fullDescription.text.length > rule.description.length, `${rule.id} has a full description from its doc page`);
    assert.match(entry.helpUri, new RegExp(`^https://.+/docs/rules/${rule.id}\\.md$`));
    assert.equal(entry.defaultConfiguration.level, rule.defaultSeverity === 'error' ? 'error' : 'warning');
    assert.equal(entry.help.markdown, readFileSync(join(repoRoot, 'docs/rules', `${rule.id}.md`), 'utf8'));
  }

  // Results match the JSON output finding for finding.
  const json = parseJson(runCli(['scan', 'fixtures/sql', '--format', 'json']).stdout);
  const expected = json.flatMap((r) =>
    r.messages.map((m) => ({
      ruleId: m.ruleId,
      level: m.severity === 2 ? 'error' : 'warning',
      text: m.message,
      uri: r.filePath.slice(repoRoot.length + 1),
      region: { startLine: m.line, startColumn: m.column, endLine: m.endLine, endColumn: m.endColumn },
    })),
  );
  assert.ok(expected.length > 5);
  const actual = sarifRun.results.map((r: any) => ({
    ruleId: r.ruleId,
    level: r.level,
    text: r.message.text,
    uri: r.locations[0].physicalLocation.artifactLocation.uri,
    region: r.locations[0].physicalLocation.region,
  }));
  assert.deepEqual(actual, expected);
  for (const result of sarifRun.results) {
    assert.equal(driver.rules[result.ruleIndex].id, result.ruleId);
    const { artifactLocation } = result.locations[0].physicalLocation;
    assert.equal(artifactLocation.uriBaseId, '%SRCROOT%');
    assert.doesNotMatch(artifactLocation.uri, /^(\/|file:)/, 'repository-relative');
    assert.ok(existsSync(join(repoRoot, decodeURIComponent(artifactLocation.uri))));
    assert.match(Object.values(result.partialFingerprints)[0] as string, /^[0-9a-f]{16}:\d+$/);
  }
  assert.equal(sarifRun.originalUriBaseIds['%SRCROOT%'].uri, `file://${repoRoot}/`);
});

test('a parse error is a result of pgq-audit/parse-error and a notification, both errors; odd file names are encoded URIs', () => {
  const dir = project({ 'odd name #1.sql': "SET app.tenant = '1';\n", 'broken.sql': "select 'never closed;\n" });
  const run = runCli(['scan', '.', '--format', 'sarif'], { cwd: dir });
  assert.equal(run.code, 1, run.stderr);
  const log = JSON.parse(run.stdout);
  assertValid(log);
  const [sarifRun] = log.runs;
  assert.deepEqual(
    sarifRun.results.map((r: any) => [r.ruleId, r.level, r.locations[0].physicalLocation.artifactLocation.uri]),
    [
      ['pgq-audit/parse-error', 'error', 'broken.sql'],
      ['pgq/no-session-tenant-setting', 'error', 'odd%20name%20%231.sql'],
    ],
  );
  const parseError = sarifRun.results[0];
  assert.equal(sarifRun.tool.driver.rules[parseError.ruleIndex].id, 'pgq-audit/parse-error');
  assert.match(parseError.message.text, /^Parsing error/);
  const [notification] = sarifRun.invocations[0].toolExecutionNotifications;
  assert.equal(notification.level, 'error');
  assert.match(notification.message.text, /^Parsing error/);
  assert.equal(notification.locations[0].physicalLocation.artifactLocation.uri, 'broken.sql');
});

test('a file that is skipped is a warning in SARIF as in every other format', () => {
  const dir = project({
    'schema.sql': 'create table t (id integer primary key autoincrement);\n',
    'ok.sql': 'select 1;\n',
    // Python 2 (a vendored script): skipped as another language is, exit 0.
    'legacy.py': 'import psycopg2\nprint "set_config"\n',
  });
  const sarif = runCli(['scan', '.', '--format', 'sarif'], { cwd: dir });
  const json = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
  assert.equal(sarif.code, 0, sarif.stderr);
  assert.equal(json.code, 0, json.stderr);
  const log = JSON.parse(sarif.stdout);
  assertValid(log);
  const [sarifRun] = log.runs;
  assert.deepEqual(sarifRun.results.map((r: any) => [r.ruleId, r.level]).sort(), [['pgq-audit/not-postgresql', 'warning'], ['pgq-audit/not-python3', 'warning']]);
  assert.deepEqual(sarifRun.invocations[0].toolExecutionNotifications.map((n: any) => n.level), ['warning', 'warning']);
  const jsonMessages = JSON.parse(json.stdout).flatMap((r: any) => r.messages);
  assert.deepEqual(jsonMessages.map((m: any) => m.severity), [1, 1]);
  assert.deepEqual(jsonMessages.map((m: any) => m.message).sort(), sarifRun.results.map((r: any) => r.message.text).sort());
});

test('a bundle named on the command line is skipped by its shape: a warning in SARIF (result and notification), JSON and stylish alike', () => {
  const bundle = `(()=>{${'var a=1;function b(c){return c?c+1:0}'.repeat(4000)}})();\n`;
  const dir = project({ 'public/app.bundle.js': bundle });
  const sarif = runCli(['scan', 'public/app.bundle.js', '--format', 'sarif'], { cwd: dir });
  const json = runCli(['scan', 'public/app.bundle.js', '--format', 'json'], { cwd: dir });
  const stylish = runCli(['scan', 'public/app.bundle.js', '--format', 'stylish'], { cwd: dir });
  const github = runCli(['scan', 'public/app.bundle.js', '--format', 'github'], { cwd: dir });
  for (const run of [sarif, json, stylish, github]) assert.equal(run.code, 0, run.stderr);
  const log = JSON.parse(sarif.stdout);
  assertValid(log);
  const [sarifRun] = log.runs;
  assert.deepEqual(sarifRun.results.map((r: any) => [r.ruleId, r.level]), [['pgq-audit/file-skipped', 'warning']]);
  assert.deepEqual(sarifRun.invocations[0].toolExecutionNotifications.map((n: any) => n.level), ['warning']);
  const [jsonMessage] = JSON.parse(json.stdout).flatMap((r: any) => r.messages);
  assert.equal(jsonMessage.severity, 1);
  assert.equal(jsonMessage.message, sarifRun.results[0].message.text);
  assert.match(jsonMessage.message, /^File skipped: it is minified/);
  assert.match(stylish.stdout, /warning\s+File skipped: it is minified/);
  assert.match(github.stdout, /^::warning file=public\/app\.bundle\.js,line=1,col=1,.*File skipped: it is minified/m);
});

test('a clean scan is a valid log with no results; --output-file writes it and leaves stdout empty', () => {
  const dir = project({ 'ok.sql': "begin;\nselect set_config('app.tenant', $1, true);\ncommit;\n" });
  const run = runCli(['scan', '.', '--format', 'sarif', '--output-file', 'out/pgq.sarif'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, '');
  const log = JSON.parse(readFileSync(join(dir, 'out/pgq.sarif'), 'utf8'));
  assertValid(log);
  assert.deepEqual(log.runs[0].results, []);
});
