// The prefilter skips files without any rule's trigger; these tests prove it
// never drops a finding: every fixture folder, scanned with and without it
// (and on worker threads), reports the same findings.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { test } from 'node:test';
import { rules } from '../../rules/index.ts';
import type { FileResult } from '../../src/engine/findings.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import { triggersFor } from '../../src/model/index.ts';
import { supportedExtensions } from '../../src/languages/extensions.ts';
import { compileMatcher } from '../../src/scan/automaton.ts';
import { buildPrefilter, triggerPattern, triggerRegExp } from '../../src/scan/prefilter.ts';
import { scan } from '../../src/scan/scan.ts';
import { prng } from '../helpers/prng.ts';

const fixtures = join(import.meta.dirname, '../../fixtures');

/** Every finding of a rule (not parse errors), per file, in a stable text form. */
function ruleFindings(results: readonly FileResult[]): string[] {
  return results.flatMap((r) => r.messages.filter((m) => m.ruleId !== null).map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId} ${m.messageId ?? ''}`)).sort();
}

/** The fixture folders as a scan of each would see them: every folder that holds source files, and fixtures/ whole. */
function fixtureFolders(): string[] {
  const extensions = supportedExtensions();
  const folders: string[] = [fixtures];
  const walk = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true });
    if (entries.some((e) => e.isFile() && extensions.includes(extname(e.name)))) folders.push(dir);
    for (const e of entries) if (e.isDirectory()) walk(join(dir, e.name));
  };
  walk(fixtures);
  return folders;
}

test('trigger patterns: case-insensitive substrings, a space matches whitespace runs and string escapes', () => {
  const pattern = triggerPattern(['set ', 'set local', 'release(', 'pgq-audit-']);
  for (const text of ['SET app.tenant = 1', 'set\tapp.tenant', "q('BEGIN;\\nSET\\nLOCAL app.tenant = 1')", 'client.RELEASE()', '-- pgq-audit-ignore-next-line', 'offset 10']) {
    assert.ok(pattern.test(text), text);
  }
  for (const text of ['settings', 'SETTING', 'release ()', 'pgq-audit', 'Set<string>']) assert.ok(!pattern.test(text), text);
});

test('Prisma model writes pass the prefilter: update, updateMany, delete and deleteMany with their argument object', () => {
  const prefilter = buildPrefilter(activeRules());
  for (const call of ["prisma.job.updateMany({ where: { id }, data: { status: 'done' } })", 'tx.job.deleteMany({ where: { id } })', 'prisma.job.delete({\n  where: { id },\n})']) {
    assert.ok(prefilter(`import { PrismaClient } from '@prisma/client';\nconst prisma = new PrismaClient();\nexport const run = async (id: number) => ${call};\n`, 'typescript'), call);
  }
  assert.ok(!prefilter('const counts = { updateMany: 0 };\ncounts.updateMany += 1;\n', 'typescript'), 'the word alone');
});

test("Python's dict.update({...}) is no trigger; SQLAlchemy's session.query(...).update({...}) is, and TS builders' .update({ stays one", () => {
  const prefilter = buildPrefilter(activeRules());
  const service = 'class Settings:\n    def __init__(self):\n        self.cache = {}\n\n    def update(self, key, value):\n        self.cache.update({key: value})\n        return self.cache\n';
  assert.ok(!prefilter(service, 'python'), 'a dict update');
  const finish = 'from app.models import Job\n\n\ndef finish(session, job_id):\n    session.query(Job).filter(Job.id == job_id).update(\n        {"status": "done"}, synchronize_session=False\n    )\n';
  assert.ok(prefilter(finish, 'python'), 'a query update');
  const chained = 'def finish(session, job_id):\n    (\n        session.query(Job)\n        .filter(Job.id == job_id, Job.status == "running")\n        .update({Job.status: "done"})\n    )\n';
  assert.ok(prefilter(chained, 'python'), 'a query update over several lines');
  assert.ok(prefilter("export const finish = (id: number) => knex('jobs').where({ id }).update({ status: 'done' });\n", 'typescript'), 'a Knex update');
  assert.ok(prefilter('export const put = (m: { update(x: object): void }) => m.update({ a: 1 });\n', 'typescript'), 'TS keeps the call shape (Prisma, Knex)');
});

test('regex triggers join the one pattern; flags other than i, backreferences and empty matches are refused', () => {
  const pattern = triggerPattern(['set_config', /update\s+\S+\s+set\s/]);
  assert.ok(pattern.test('UPDATE jobs SET status = 1'));
  assert.ok(pattern.test('await q(`update ${table}\n  set x = 1`)'));
  assert.ok(!pattern.test('// update the cache, then set the flag'));
  const rule = (trigger: RegExp) => ({ rule: { ...rules[0], id: 'test-regex', languages: ['python' as const], triggers: [trigger] }, severity: 2 as const, options: {} });
  assert.ok(buildPrefilter([rule(/delete\s+from/i)])('cur.execute("DELETE FROM jobs")', 'python'));
  // Triggers are checked, and what the matcher cannot take is found, when the language's matcher is
  // compiled, on its first file: a scan served from the cache checks and compiles nothing.
  const first = (trigger: RegExp) => buildPrefilter([rule(trigger)])('cur.execute("select 1")', 'python');
  assert.throws(() => first(/x/g), /rule test-regex: trigger \/x\/g may have no flag but i/);
  assert.throws(() => first(/(a)\1/), /backreference/);
  assert.throws(() => first(/x*/), /empty text/);
  assert.doesNotThrow(() => buildPrefilter([rule(/x*/)]));
  const boundary = buildPrefilter([rule(/\bjob/)]);
  assert.throws(() => boundary('cur.execute("select 1")', 'python'), /rule test-regex: trigger \/\\bjob\/: /);
});

test('the prefilter reads only the triggers of rules for the file’s language, plus suppression comments', () => {
  const prefilter = buildPrefilter(activeRules());
  const leak = 'cur.execute("select set_config(\'app.tenant\', %s, false)", [tenant])';
  assert.equal(prefilter('total = sum(x.price for x in items)\n', 'python'), false);
  assert.equal(prefilter(leak, 'python'), true);
  assert.equal(prefilter('x = 1  # pgq-audit-ignore-next-line x -- why', 'python'), true);
  assert.equal(buildPrefilter(activeRules(), { enabled: false })('x = 1', 'python'), true);
  // .sql files are SQL through and through: always parsed, so a migration that does not parse is reported.
  assert.equal(prefilter('select 1 from t;', 'sql'), true);
  // With every rule off, only suppression comments make a host file worth parsing.
  const off = Object.fromEntries(rules.map((r) => [r.id, 'off' as const]));
  assert.equal(buildPrefilter(activeRules(off))(leak, 'python'), false);
});

test('a rule without triggers turns the prefilter off for its languages', () => {
  const noTriggers = { ...rules[0], id: 'test-no-triggers', languages: ['python' as const], triggers: [] };
  const prefilter = buildPrefilter([{ rule: noTriggers, severity: 2, options: {} }]);
  assert.equal(prefilter('x = 1', 'python'), true);
  assert.equal(prefilter('x = 1', 'typescript'), false);
});

test('every rule declares lowercase-insensitive, non-empty triggers', () => {
  for (const rule of rules) {
    assert.ok(rule.triggers.length > 0, `${rule.id} declares no trigger: every file would be parsed`);
    for (const trigger of rule.triggers) {
      if (typeof trigger === 'string') assert.ok(trigger.trim().length >= 3, `${rule.id}: trigger '${trigger}' is too short to filter anything`);
    }
  }
  // Every trigger compiles into the one linear matcher of its languages (a word boundary, for one, does not).
  const all = buildPrefilter(rules.map((rule) => ({ rule, severity: 2 as const, options: {} })));
  for (const language of new Set(rules.flatMap((rule) => rule.languages))) assert.doesNotThrow(() => all('', language), language);
});

test('the prefilter never drops a finding: every fixture folder with and without it, in-process and on workers', async () => {
  const folders = fixtureFolders();
  assert.ok(folders.length > 3, 'fixture folders found');
  let compared = 0;
  for (const folder of folders) {
    const without = await scan({ paths: [folder], cwd: folder, prefilter: false, concurrency: 'off' });
    const withIt = await scan({ paths: [folder], cwd: folder, concurrency: 'off' });
    assert.deepEqual(ruleFindings(withIt.results), ruleFindings(without.results), `prefilter changed findings under ${folder}`);
    compared += ruleFindings(without.results).length;
  }
  assert.ok(compared > 50, `the fixtures hold findings to compare (${compared})`);
  // The whole fixtures tree once more on worker threads: same findings, same order of files.
  const plain = await scan({ paths: [fixtures], cwd: fixtures, prefilter: false, concurrency: 'off' });
  const pooled = await scan({ paths: [fixtures], cwd: fixtures, concurrency: 2, inProcessFiles: 0 });
  assert.ok(pooled.stats.threads > 0, 'ran on workers');
  assert.deepEqual(ruleFindings(pooled.results), ruleFindings(plain.results));
  assert.deepEqual(pooled.results.map((r) => r.filePath), plain.results.map((r) => r.filePath));
});

test('host files without a trigger are not parsed and say nothing; .sql files are always parsed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-prefilter-'));
  writeFileSync(join(dir, 'plain.py'), 'def total(items):\n    return sum(i.price for i in items)\n');
  writeFileSync(join(dir, 'broken.py'), 'def total(items)\n    return 0\n');
  writeFileSync(join(dir, 'broken.sql'), 'selec id frm where;\n');
  writeFileSync(join(dir, 'bad.sql'), "select set_config('app.tenant', '1', false);\n");
  const result = await scan({ paths: [dir], cwd: dir });
  assert.equal(result.stats.files, 4);
  assert.equal(result.stats.parsed, 2);
  const byName = Object.fromEntries(result.results.map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => m.ruleId ?? (m.fatal ? 'fatal' : 'other'))]));
  assert.deepEqual(byName, { 'bad.sql': ['no-session-tenant-setting'], 'broken.py': [], 'broken.sql': ['fatal'], 'plain.py': [] });
});

test('the word discard is no trigger; DISCARD ALL is, also split across concatenated strings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-prefilter-'));
  writeFileSync(join(dir, 'editor.ts'), "// Discard the draft when the user leaves.\nexport function discardChanges(draft: { discard(): void }) {\n  draft.discard();\n}\n");
  writeFileSync(
    join(dir, 'reset.ts'),
    "import pg from 'pg';\nconst pool = new pg.Pool();\nexport async function reset() {\n  const client = await pool.connect();\n  await client.query({ name: 'one', text: 'select 1' });\n  await client.query('DISCARD ' + 'ALL');\n  client.release();\n}\n",
  );
  const result = await scan({ paths: [dir], cwd: dir });
  assert.equal(result.stats.parsed, 1, 'only reset.ts is parsed');
  const byName = Object.fromEntries(result.results.map((r) => [r.filePath.slice(dir.length + 1), r.messages.map((m) => m.ruleId)]));
  assert.deepEqual(byName['editor.ts'], []);
  assert.ok(byName['reset.ts'].includes('no-discard-all-with-prepared-statements'), JSON.stringify(byName));
});

/** Every trigger of every rule, in each of its languages, once: a superset of the union the TS prefilter runs. */
const allTriggers = [...new Map(rules.flatMap((r) => r.languages.flatMap((language) => triggersFor(r.triggers, language))).map((t) => [String(t), t] as const)).values()];

test('the linear matcher answers exactly what the trigger regex answers, on strings and on bytes', { timeout: 60_000 }, () => {
  const matcher = triggerPattern(allTriggers);
  const regex = triggerRegExp(allTriggers);
  const tokens = ['update', 'UPDATE', 'set', 'SET', ' ', '  ', '\n', '\t', '\n', '\r', "'", '"', '`', '+', ';', 'jobs', '${t}', 'local', 'session', 'role', 'authorization', '=', 'to', 'x', 'delete', 'from', 'insert', 'into', 'merge', 'for', 'skip', 'locked', 'share', 'key', 'no', '.release', 'set_config', 'discard', 'pgq-audit-', '\t', '\n', 'é', '\u2028', '\u3000', '\u00a0', 'Ā'];
  const random = prng(14);
  let positives = 0;
  for (let i = 0; i < 20_000; i++) {
    let text = '';
    const n = 1 + Math.floor(random() * 14);
    for (let j = 0; j < n; j++) text += tokens[Math.floor(random() * tokens.length)];
    const expected = regex.test(text);
    if (expected) positives++;
    assert.equal(matcher.test(text), expected, JSON.stringify(text));
    const bytes = Buffer.from(text, 'utf8');
    assert.equal(matcher.test(bytes), regex.test(bytes.toString('latin1')), `bytes of ${JSON.stringify(text)}`);
  }
  assert.ok(positives > 1000 && positives < 19_000, `both answers were exercised (${positives} matches)`);
});

test('a match is found at every offset and length of the text, up to its last byte', () => {
  // The byte loop takes four transitions a turn: a match may start or end anywhere in a turn or after the last whole one.
  const matcher = triggerPattern(['set_config', /discard\s+all/i]);
  for (const trigger of ['set_config', 'DISCARD  all']) {
    for (let before = 0; before < 9; before++) {
      for (let after = 0; after < 9; after++) {
        const text = `${'x'.repeat(before)}${trigger}${'y'.repeat(after)}`;
        assert.equal(matcher.test(Buffer.from(text, 'latin1')), true, JSON.stringify(text));
        const cut = `${'x'.repeat(before)}${trigger.slice(0, -1)}${'y'.repeat(after)}`;
        assert.equal(matcher.test(Buffer.from(cut, 'latin1')), false, JSON.stringify(cut));
      }
    }
  }
  for (const short of ['', 's', 'se', 'set', 'set_']) assert.equal(matcher.test(Buffer.from(short)), false);
});

test('the matcher refuses what it cannot run in linear time, and regexes it does not understand', () => {
  for (const bad of [/(a)\1x/, /^update/, /update$/, /\bset\b/, /set(?=x)/, /caf\u00e9/, /[\u0100]x/]) {
    assert.throws(() => compileMatcher([{ source: bad.source, flags: 'i' }]), /not supported|ASCII|backreference/, String(bad));
  }
  assert.throws(() => compileMatcher([{ source: 'x*', flags: 'i' }]), /empty text/);
  assert.throws(() => compileMatcher([{ source: 'x', flags: 'g' }]), /flags/);
});

test('hostile text costs the matcher linear work: doubling it doubles the work, whatever its shape', { timeout: 60_000 }, () => {
  const random = prng(13);
  const shapes: Record<string, (n: number) => string> = {
    '// update and spaces': (n) => '// update    '.repeat(n / 13),
    'update then a long run of blanks': (n) => `update${' '.repeat(n - 10)}jobs`,
    'set and spaces': (n) => 'set '.repeat(n / 4),
    'update/set words at random gaps': (n) => {
      let text = '';
      while (text.length < n) text += ['update', ' ', '  \\n ', 'set', "' + '", 'x', ';'][Math.floor(random() * 7)];
      return text;
    },
  };
  for (const [name, make] of Object.entries(shapes)) {
    const work = (size: number) => {
      const matcher = triggerPattern(allTriggers);
      assert.equal(typeof matcher.test(Buffer.from(make(size), 'latin1')), 'boolean');
      return matcher.work;
    };
    const small = work(260_000);
    const large = work(520_000);
    // Per byte: one table lookup, and at most one DFA state built, which visits each NFA state at most twice.
    assert.ok(large.nfaSteps <= large.symbols * 2 * large.nfaStates, `${name}: bounded work per byte`);
    assert.ok(large.nfaSteps <= 2.2 * small.nfaSteps + 10 * large.nfaStates, `${name}: ${small.nfaSteps} NFA steps for ${small.symbols} bytes, ${large.nfaSteps} for ${large.symbols}`);
  }
});

test('a 510 KB .ts of "// update" and spaces is read in one pass: not parsed, nothing reported', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-hostile-'));
  writeFileSync(join(dir, 'hostile.ts'), '// update     '.repeat(510 * 1024 / 14));
  const result = await scan({ paths: [dir], cwd: dir, timeBudget: 1000 });
  assert.equal(result.stats.parsed, 0);
  assert.deepEqual(result.results.map((r) => r.messages), [[]]);
});
