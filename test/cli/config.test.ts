// pgq-audit.config.json and package.json "pgqAudit": found from the scanned
// path upwards or named with --config; severities, options, shared settings,
// ignores; every mistake named with the valid values; the JSON schema file
// generated from the rules and in agreement with the validator.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Ajv from 'ajv';
import { rules } from '../../rules/index.ts';
import { configSchemaText, SCHEMA_PATH } from '../../src/config/schema.ts';
import { validateConfig } from '../../src/config/validate.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { findingsByFile, parseJson, project } from './project.ts';

const SESSION = "SET app.tenant = '1';\nselect 1;\nSET app.org_id = '2';\n";
const config = (value: unknown) => JSON.stringify(value, null, 2);

describe('finding the config', () => {
  test('the nearest pgq-audit.config.json above the scanned folder applies', () => {
    const dir = project({
      'pgq-audit.config.json': config({ rules: { 'no-session-tenant-setting': 'warn' } }),
      'services/worker/db/set.sql': SESSION,
    });
    const run = runCli(['scan', 'services/worker/db', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
    const [result] = parseJson(run.stdout);
    assert.equal(result.warningCount, 2);
    assert.equal(result.errorCount, 0);
  });

  test('a nearer config wins over one further up; package.json "pgqAudit" counts as one', () => {
    const dir = project({
      'pgq-audit.config.json': config({ rules: { 'no-session-tenant-setting': 'off' } }),
      'pkg/package.json': config({ name: 'worker', pgqAudit: { rules: { 'no-session-tenant-setting': 'warn' } } }),
      'pkg/db/set.sql': SESSION,
    });
    const run = runCli(['scan', 'pkg/db', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(parseJson(run.stdout)[0].warningCount, 2);
  });

  test('a package.json without "pgqAudit" is passed over', () => {
    const dir = project({
      'pgq-audit.config.json': config({ rules: { 'no-session-tenant-setting': 'warn' } }),
      'pkg/package.json': config({ name: 'worker' }),
      'pkg/set.sql': SESSION,
    });
    const run = runCli(['scan', 'pkg', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(parseJson(run.stdout)[0].warningCount, 2);
  });

  test('--config names one; --rule wins over it', () => {
    const dir = project({
      'ci/strict.json': config({ rules: { 'no-session-tenant-setting': 'warn' } }),
      'set.sql': SESSION,
    });
    const configured = runCli(['scan', '.', '--config', 'ci/strict.json', '--format', 'json'], { cwd: dir });
    assert.equal(configured.code, 0, configured.stderr);
    assert.equal(parseJson(configured.stdout)[0].warningCount, 2);
    const flagged = runCli(['scan', '.', '--config', 'ci/strict.json', '--rule', 'no-session-tenant-setting:error'], { cwd: dir });
    assert.equal(flagged.code, 1);
    const missing = runCli(['scan', '.', '--config', 'nope.json'], { cwd: dir });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--config nope\.json: no such file/);
  });
});

describe('what a config sets', () => {
  test('settings.tenantSettings reaches every rule with a settings option; a rule option wins', () => {
    const dir = project({
      'pgq-audit.config.json': config({ settings: { tenantSettings: ['app.org_*'] } }),
      'set.sql': SESSION,
    });
    const shared = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
    assert.equal(shared.code, 1, shared.stderr);
    assert.deepEqual(findingsByFile(parseJson(shared.stdout), dir)['set.sql'], ['pgq/no-session-tenant-setting@3']);

    const own = project({
      'pgq-audit.config.json': config({
        settings: { tenantSettings: ['app.org_*'] },
        rules: { 'no-session-tenant-setting': { options: { settings: ['app.tenant'] } } },
      }),
      'set.sql': SESSION,
    });
    const run = runCli(['scan', '.', '--format', 'json'], { cwd: own });
    assert.deepEqual(findingsByFile(parseJson(run.stdout), own)['set.sql'], ['pgq/no-session-tenant-setting@1']);
  });

  test('settings.queueTables names the queue tables for no-tenant-policy-on-queue', () => {
    const policy = [
      'alter table work_items enable row level security;',
      "create policy by_tenant on work_items using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);",
      '',
    ].join('\n');
    const without = project({ 'policy.sql': policy });
    assert.equal(runCli(['scan', '.'], { cwd: without }).code, 0, 'work_items does not read as a queue by its name');
    const dir = project({ 'policy.sql': policy, 'pgq-audit.config.json': config({ settings: { queueTables: ['work_items'] } }) });
    const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(findingsByFile(parseJson(run.stdout), dir)['policy.sql'], ['pgq/no-tenant-policy-on-queue@2']);
  });

  test('settings.queryFunctions makes the front ends read SQL passed to in-house wrappers', () => {
    const job = ['from app.db import run_sql', '', 'def job(tenant):', '    run_sql("select set_config(\'app.tenant\', %s, false)", [tenant])', ''].join('\n');
    const plain = project({ 'job.py': job });
    const unknown = runCli(['scan', '.', '--format', 'json'], { cwd: plain });
    assert.equal(unknown.code, 0, unknown.stdout);
    const dir = project({ 'job.py': job, 'pgq-audit.config.json': config({ settings: { queryFunctions: ['run_sql'] } }) });
    const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(findingsByFile(parseJson(run.stdout), dir)['job.py'], ['pgq/no-session-tenant-setting@4']);
  });

  test('ignores are globs relative to the config file', () => {
    const dir = project({
      'pgq-audit.config.json': config({ ignores: ['legacy/**', '**/*.generated.sql'] }),
      'legacy/old.sql': SESSION,
      'app/db/schema.generated.sql': SESSION,
      'app/db/set.sql': SESSION,
    });
    const run = runCli(['scan', 'app', 'legacy', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(Object.keys(findingsByFile(parseJson(run.stdout), dir)), ['app/db/set.sql']);
    const fromBelow = runCli(['scan', '.', '--format', 'json'], { cwd: join(dir, 'app') });
    assert.deepEqual(parseJson(fromBelow.stdout).map((r) => r.filePath), [join(dir, 'app/db/set.sql')]);
  });

  test('reportUnusedSuppressions sets the severity of pgq/unused-suppression', () => {
    const text = '-- pgq-audit-ignore-next-line no-session-tenant-setting -- nothing here any more\nselect 1;\n';
    const dir = project({ 'pgq-audit.config.json': config({ reportUnusedSuppressions: 'error' }), 'a.sql': text });
    const run = runCli(['scan', '.', '--format', 'json'], { cwd: dir });
    assert.equal(run.code, 1);
    assert.deepEqual(parseJson(run.stdout)[0].messages.map((m) => [m.ruleId, m.severity]), [['pgq/unused-suppression', 2]]);
  });
});

describe('mistakes in a config exit 2 and name what is wrong', () => {
  const cases: [string, unknown, RegExp][] = [
    ['an unknown rule', { rules: { 'no-sesion-tenant-setting': 'error' } }, /pgq-audit\.config\.json: rules: unknown rule 'no-sesion-tenant-setting'\. Valid rules: no-session-tenant-setting, .*no-tenant-policy-on-queue/],
    ['a prefixed rule id', { rules: { 'pgq/no-session-tenant-setting': 'error' } }, /unknown rule 'pgq\/no-session-tenant-setting': write rule ids without the pgq\/ prefix \('no-session-tenant-setting'\)/],
    ['an unknown option', { rules: { 'no-tenant-policy-on-queue': { options: { queueTable: ['jobs'] } } } }, /rules\.no-tenant-policy-on-queue\.options: unknown option 'queueTable'\. Valid options: settings, queueTables/],
    ['an option of a rule that has none', { rules: { 'no-discard-all-with-prepared-statements': { options: { x: 1 } } } }, /unknown option 'x'\. This rule has no options/],
    ['a wrong option type', { rules: { 'no-session-tenant-setting': { options: { settings: 'app.tenant' } } } }, /rules\.no-session-tenant-setting\.options\.settings: expected an array of strings, got string "app\.tenant"/],
    ['a bad severity', { rules: { 'no-session-tenant-setting': 'fatal' } }, /rules\.no-session-tenant-setting: "fatal" is not a severity\. Valid severities: off, warn, error/],
    ['an unknown key', { rule: {} }, /unknown key 'rule'\. Valid keys: \$schema, rules, settings, ignores, reportUnusedSuppressions/],
    ['an unknown setting', { settings: { tenantSetting: ['x'] } }, /settings: unknown setting 'tenantSetting'\. Valid settings: tenantSettings, queueTables, queryFunctions/],
    ['ignores not an array', { ignores: 'legacy/**' }, /ignores: expected an array of strings/],
    ['queryFunctions of numbers', { settings: { queryFunctions: [1] } }, /settings\.queryFunctions\[0\]: expected a string, got number 1/],
  ];
  for (const [name, value, message] of cases) {
    test(name, () => {
      const dir = project({ 'pgq-audit.config.json': config(value), 'a.sql': 'select 1;\n' });
      const run = runCli(['scan', '.'], { cwd: dir });
      assert.equal(run.code, 2, run.stdout);
      assert.match(run.stderr, message);
    });
  }

  test('a file that is not JSON, and package.json "pgqAudit" mistakes name the key', () => {
    const dir = project({ 'pgq-audit.config.json': '{ rules: }', 'a.sql': 'select 1;\n' });
    const run = runCli(['scan', '.'], { cwd: dir });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /pgq-audit\.config\.json:1:3: not valid JSON: expected a property name in double quotes, found "r"/);
    const pkg = project({ 'package.json': config({ pgqAudit: { ignore: [] } }), 'a.sql': 'select 1;\n' });
    const bad = runCli(['scan', '.'], { cwd: pkg });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /package\.json#pgqAudit: unknown key 'ignore'/);
  });
});

describe('the JSON schema file', () => {
  const schema = JSON.parse(readFileSync(join(repoRoot, SCHEMA_PATH), 'utf8'));

  test(`${SCHEMA_PATH} is up to date`, () => {
    const message = `${SCHEMA_PATH} is out of date: a rule or its options changed. Regenerate it: node --import tsx src/config/schema.ts`;
    assert.equal(readFileSync(join(repoRoot, SCHEMA_PATH), 'utf8'), configSchemaText(), message);
  });

  test('it is a valid draft-07 schema that lists every rule and its options', () => {
    const ajv = new Ajv.default({ strict: true, allErrors: true });
    ajv.compile(schema);
    for (const rule of rules) {
      const entry = schema.properties.rules.properties[rule.id];
      assert.ok(entry, rule.id);
      assert.deepEqual(entry.anyOf[1].properties.options, JSON.parse(JSON.stringify(rule.schema)));
    }
  });

  test('ajv with the schema and pgq-audit agree on valid and invalid configs', () => {
    const ajv = new Ajv.default({ strict: true, allErrors: true });
    const validate = ajv.compile(schema);
    const samples: unknown[] = [
      {},
      { $schema: './node_modules/pgq-audit/schema/pgq-audit.config.schema.json' },
      { rules: { 'no-session-tenant-setting': 'warn', 'no-tenant-policy-on-queue': { severity: 'error', options: { queueTables: ['jobs'] } } } },
      { rules: { 'no-session-tenant-setting': { options: { settings: ['app.*'] } } } },
      { settings: { tenantSettings: ['app.tenant'], queueTables: ['jobs'], queryFunctions: ['db.run'] }, ignores: ['legacy/**'], reportUnusedSuppressions: 'off' },
      { rules: { 'no-such-rule': 'warn' } },
      { rules: { 'no-session-tenant-setting': 'fatal' } },
      { rules: { 'no-session-tenant-setting': ['error'] } },
      { rules: { 'no-session-tenant-setting': { options: { nope: true } } } },
      { rules: { 'no-session-tenant-setting': { severity: 'warn', extra: 1 } } },
      { settings: { queueTables: 'jobs' } },
      { ignores: [1] },
      { reportUnusedSuppressions: true },
      { other: 1 },
      [],
    ];
    for (const sample of samples) {
      let ours = true;
      try {
        validateConfig(sample, 'sample');
      } catch {
        ours = false;
      }
      assert.equal(ours, validate(sample), `${JSON.stringify(sample)}: pgq-audit says ${ours}, the schema says ${!ours}`);
    }
  });
});

test('every config example in docs/ci.md and the rule pages is a valid config', async () => {
  const { readdirSync } = await import('node:fs');
  const pages = ['docs/ci.md', ...readdirSync(join(repoRoot, 'docs/rules')).map((f) => `docs/rules/${f}`)];
  let checked = 0;
  for (const page of pages) {
    for (const [, code] of readFileSync(join(repoRoot, page), 'utf8').matchAll(/```json\n([\s\S]*?)```/g)) {
      const value = JSON.parse(code);
      if (!('rules' in value || 'settings' in value || 'reportUnusedSuppressions' in value)) continue;
      assert.doesNotThrow(() => validateConfig(value, page), page);
      checked++;
    }
  }
  assert.ok(checked >= 3, `checked ${checked} examples`);
});
