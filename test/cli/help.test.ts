// What a new user types first: `help`, `help <command>`, `<command> --help`
// (one text each), `rules` (which of them are meta rules), and `explain`
// rendered on a terminal, plain Markdown when piped.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { rules } from '../../rules/index.ts';
import { main, type Io } from '../../src/cli/main.ts';
import { renderMarkdown } from '../../src/cli/terminal-markdown.ts';
import { metaRules } from '../../src/suppressions/index.ts';
import { repoRoot, runCli } from '../helpers/cli.ts';
import { project } from './project.ts';

test('help, help <command> and <command> --help print the same text', () => {
  const top = runCli(['help']);
  assert.equal(top.code, 0, top.stderr);
  assert.equal(top.stdout, runCli(['--help']).stdout);
  assert.equal(top.stdout, runCli(['help', 'help']).stdout);
  assert.match(top.stdout, /^ {2}help \[command\] +Show this help, or a command's options/m);
  for (const command of ['scan', 'db', 'rules', 'explain']) {
    const viaHelp = runCli(['help', command]);
    const viaFlag = runCli([command, '--help']);
    assert.equal(viaHelp.code, 0, viaHelp.stderr);
    assert.equal(viaFlag.code, 0, viaFlag.stderr);
    assert.equal(viaHelp.stdout, viaFlag.stdout, command);
    assert.match(viaHelp.stdout, new RegExp(`^Usage: pgq-audit ${command}`), command);
  }
});

test('help of an unknown command names it and lists the valid ones; help takes one command', () => {
  const unknown = runCli(['help', 'lint']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^pgq-audit: Unknown command 'lint'\. Valid commands: scan, rules, explain, db, help\n$/);
  const two = runCli(['help', 'scan', 'rules']);
  assert.equal(two.code, 2);
  assert.match(two.stderr, /help takes one command, got 'rules' after 'scan'/);
});

test('rules lists the meta rules apart, and says how many of each', () => {
  const run = runCli(['rules'], { cwd: project({}) });
  assert.equal(run.code, 0, run.stderr);
  const [checks, meta] = run.stdout.split(/^Meta rules \(built in: they check pgq-audit's own suppression comments, not the code\):$/m);
  assert.ok(meta, run.stdout);
  for (const rule of rules) assert.match(checks, new RegExp(`^pgq/${rule.id} `, 'm'));
  for (const rule of metaRules) {
    assert.match(meta, new RegExp(`^pgq/${rule.id} `, 'm'));
    assert.doesNotMatch(checks, new RegExp(`^pgq/${rule.id} `, 'm'));
  }
  assert.match(meta, new RegExp(`^${rules.length} rules \\(the README's table\\) and ${metaRules.length} meta rules\\. Severities: defaults`, 'm'));
  // The README's table lists exactly the rules above the meta rules.
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const inTable = [...readme.matchAll(/^\| \[`pgq\/([\w-]+)`\]/gm)].map((m) => m[1]);
  assert.deepEqual(new Set(inTable), new Set(rules.map((r) => r.id)));
});

function capture(isTTY: boolean, env: NodeJS.ProcessEnv = {}, columns = 72) {
  const out: string[] = [];
  const io: Io = { stdout: (t) => out.push(t), stderr: (t) => out.push(t), isTTY, columns, cwd: repoRoot, env };
  return { io, text: () => out.join('') };
}

test('explain on a terminal: rendered, wrapped to the width, code indented, coloured unless NO_COLOR', async () => {
  const page = readFileSync(join(repoRoot, 'docs/rules/no-session-tenant-setting.md'), 'utf8');
  const plain = capture(true, { NO_COLOR: '1' });
  assert.equal(await main(['explain', 'no-session-tenant-setting'], plain.io), 0);
  const text = plain.text();
  assert.doesNotMatch(text, /\u001b\[/, 'no escape codes under NO_COLOR');
  assert.match(text, /^pgq\/no-session-tenant-setting\n═+\n/, 'the title, underlined');
  assert.match(text, /^What goes wrong\n─+\n/m);
  assert.doesNotMatch(text, /^#+ /m, 'no Markdown heading marks');
  assert.doesNotMatch(text, /^```/m, 'no fences');
  assert.match(text, /^ {4}SET app\.tenant = '42';$/m, 'code indented, as written');
  assert.match(text, /^ {2}• a write that clears:/m, 'list items get a bullet');
  const prose = text.split('\n').filter((line) => !line.startsWith('    ') && !line.startsWith('  │ '));
  assert.ok(prose.every((line) => line.length <= 72), prose.filter((line) => line.length > 72).join('\n'));
  // Nothing of the page is lost: every word is there (but the languages named on code fences).
  const words = (s: string) => new Set(s.toLowerCase().match(/[a-z]{4,}/g));
  for (const word of words(page.replace(/^```\w+$/gm, ''))) assert.ok(words(text).has(word), word);

  const coloured = capture(true, {});
  await main(['explain', 'no-session-tenant-setting'], coloured.io);
  assert.match(coloured.text(), /\u001b\[1mWhat goes wrong\u001b\[22m/);
  assert.match(coloured.text(), /\u001b\[36m {4}SET app\.tenant = '42';\u001b\[39m/);
});

test('explain piped or redirected prints the Markdown as it is', async () => {
  const piped = capture(false);
  assert.equal(await main(['explain', 'unused-suppression'], piped.io), 0);
  assert.equal(piped.text(), readFileSync(join(repoRoot, 'docs/rules/unused-suppression.md'), 'utf8'));
});

test('the terminal renderer: tables align when they fit, wrap when they do not; links keep their address', () => {
  const markdown = '| a | bee |\n|---|---|\n| ccc | d |\n\nSee [the CI page](../ci.md) and **this**.\n';
  assert.equal(renderMarkdown(markdown, { width: 40, color: false }), '  a   │ bee\n  ────┼────\n  ccc │ d\n\nSee the CI page (../ci.md) and this.\n');
  const wide = `| ${'x'.repeat(30)} | ${'y '.repeat(20)}|\n|---|---|\n`;
  const lines = renderMarkdown(wide, { width: 40, color: false }).trimEnd().split('\n');
  assert.ok(lines.length > 1 && lines.every((line) => line.length <= 40), lines.join('\n'));
});
