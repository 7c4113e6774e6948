// A config file that is not JSON is named with the line and column of the
// first character that is not, the same on every Node version.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonSyntaxError, parseJson } from '../../src/config/json.ts';
import { runCli } from '../helpers/cli.ts';
import { BAD_SESSION_SQL, project } from '../cli/project.ts';

const where = (text: string) => {
  try {
    parseJson(text);
  } catch (error) {
    assert.ok(error instanceof JsonSyntaxError);
    return `${error.line}:${error.column} ${error.message}`;
  }
  return 'parsed';
};

test('the first character that is not JSON, by line and column', { timeout: 10_000 }, () => {
  assert.equal(where('{\n  "rules": {}\n  "ignores": []\n}'), `3:3 expected ',' or '}' after the property value, found "\\""`);
  assert.equal(where('{\r\n  "rules": {\r\n    "a": "warn",\r\n  }\r\n}'), '4:3 expected a property name in double quotes, found "}"');
  assert.equal(where('{"ignores": ["a",]}'), '1:18 expected a value, found "]"');
  assert.equal(where("{'rules': {}}"), `1:2 expected a property name in double quotes, found "'"`);
  assert.equal(where('{"a": tru}'), '1:7 expected a value, found "t"');
  assert.equal(where('{"a": "x\\q"}'), '1:9 expected a valid string, found "\\\\"');
  assert.equal(where('{"a": 01}'), `1:8 expected ',' or '}' after the property value, found "1"`);
  assert.equal(where('{} {}'), '1:4 expected the end of the file after the value, found "{"');
  assert.equal(where('{"rules": {'), '1:12 expected a property name in double quotes, but the file ends');
  assert.equal(where(''), '1:1 expected a value, but the file ends');
  assert.equal(where('\ufeff{\n,}'), '2:1 expected a property name in double quotes, found ","');
  // A byte order mark, as some Windows editors write, is not an error.
  assert.deepEqual(parseJson('\ufeff{"rules": {}}'), { rules: {} });
  assert.deepEqual(parseJson('[1, -2.5e3, "\\u00e9", true, false, null, {"a": [{}]}]'), [1, -2500, 'é', true, false, null, { a: [{}] }]);
});

test('the CLI names the config file, line and column, and exits 2', { timeout: 30_000 }, () => {
  const dir = project({ 'pgq-audit.config.json': '{\n  "rules": {\n    "no-session-tenant-setting": "warn"\n    "no-discard-all-with-prepared-statements": "off"\n  }\n}\n', 'a.sql': 'select 1;\n' });
  const run = runCli(['scan', '.'], { cwd: dir });
  assert.equal(run.code, 2, run.stdout);
  assert.equal(run.stderr, `pgq-audit: pgq-audit.config.json:4:5: not valid JSON: expected ',' or '}' after the property value, found "\\""\n`);
});

test("a unit's own config that is not JSON is named the same way when the scan reaches it", { timeout: 30_000 }, () => {
  const dir = project({ 'svc/pgq-audit.config.json': '{\n  "defaultSchema": "app",\n}\n', 'svc/jobs.sql': BAD_SESSION_SQL, 'package.json': '{"name": "root"}' });
  const run = runCli(['scan', '.'], { cwd: dir });
  assert.equal(run.code, 2, run.stdout);
  assert.match(run.stderr, /svc\/pgq-audit\.config\.json:3:1: not valid JSON: expected a property name in double quotes, found "}"/);
});
