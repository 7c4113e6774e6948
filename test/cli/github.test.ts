// --format github: one workflow command per finding, as GitHub Actions parses them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { git, parseJson, project } from './project.ts';

interface Command {
  kind: string;
  properties: Record<string, string>;
  message: string;
}

/** The inverse of @actions/core's escaping. */
function parseCommands(stdout: string): Command[] {
  const unescape = (text: string) => text.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const match = /^::(error|warning|notice) ([^:]*)::(.*)$/.exec(line);
      assert.ok(match, `not a workflow command: ${line}`);
      const properties = Object.fromEntries(match[2].split(',').map((pair) => {
        const eq = pair.indexOf('=');
        return [pair.slice(0, eq), unescape(pair.slice(eq + 1))];
      }));
      return { kind: match[1], properties, message: unescape(match[3]) };
    });
}

test('one ::error command per finding, with the file, the 1-based range and pgq/<rule-id> as title', () => {
  const run = runCli(['scan', 'fixtures/sql', '--format', 'github']);
  assert.equal(run.code, 1, run.stderr);
  const commands = parseCommands(run.stdout);
  const json = parseJson(runCli(['scan', 'fixtures/sql', '--format', 'json']).stdout);
  const expected = json.flatMap((r) =>
    r.messages.map((m) => ({
      kind: m.severity === 2 ? 'error' : 'warning',
      properties: {
        file: r.filePath.slice(repoRoot.length + 1),
        line: String(m.line),
        col: String(m.column),
        endLine: String(m.endLine),
        endColumn: String(m.endColumn),
        title: String(m.ruleId),
      },
      message: m.message,
    })),
  );
  assert.ok(expected.length > 5);
  assert.deepEqual(commands, expected);
  assert.deepEqual(Object.keys(commands[0].properties), ['file', 'line', 'col', 'endLine', 'endColumn', 'title']);
});

test('warnings are ::warning; commas and colons in paths are escaped; nothing for a clean scan', () => {
  const dir = project({ 'jobs,v2: tenant.sql': "SET app.tenant = '1';\n", 'ok.sql': 'select 1;\n' });
  const run = runCli(['scan', '.', '--format', 'github', '--rule', 'no-session-tenant-setting:warn'], { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^::warning file=jobs%2Cv2%3A tenant\.sql,line=1,/);
  const [command] = parseCommands(run.stdout);
  assert.equal(command.kind, 'warning');
  assert.equal(command.properties.file, 'jobs,v2: tenant.sql');
  assert.equal(command.properties.title, 'pgq/no-session-tenant-setting');

  const clean = runCli(['scan', 'ok.sql', '--format', 'github'], { cwd: dir });
  assert.equal(clean.code, 0);
  assert.equal(clean.stdout, '');
});

test('paths are relative to the repository root even when run from a subfolder', () => {
  const dir = project({ 'db/queries/set.sql': "SET app.tenant = '1';\n" });
  const sub = `${dir}/db`;
  // Not a git work tree: the root is the current folder.
  const plain = parseCommands(runCli(['scan', '.', '--format', 'github'], { cwd: sub }).stdout);
  assert.equal(plain[0].properties.file, 'queries/set.sql');
  // In a git work tree: relative to its top, which is what GitHub resolves annotations against.
  git(dir, 'init', '-q');
  const inRepo = parseCommands(runCli(['scan', '.', '--format', 'github'], { cwd: sub }).stdout);
  assert.equal(inRepo[0].properties.file, 'db/queries/set.sql');
});
