// A corpus of hostile inputs, generated into a temp folder for every
// registered front end (so the TS/JS and Python front ends are covered as
// they land): a 20 MB minified one-line file, a 10,000-deep nested
// expression, invalid UTF-8, a symlink loop, unreadable files and a FIFO, a
// .sql file of 1 million statements, SQL with every placeholder style. One
// scan, in a process of its own with a per-file time budget: every file gets
// a result, nothing crashes, nothing stalls the scan, memory stays bounded,
// and the findings of ordinary files next to the hostile ones are reported.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, relative } from 'node:path';
import { after, test } from 'node:test';
import { rules } from '../../rules/index.ts';
import { frontEnds } from '../../src/languages/index.ts';
import type { Language } from '../../src/model/index.ts';
import { expectationsOf, type Expected } from '../helpers/expectations.ts';

const fixtures = join(import.meta.dirname, '../../fixtures');
const projectRules = new Set(rules.filter((r) => r.checkProject).map((r) => r.id));
/** The big files (20 MB, a million statements) are stopped by this budget... */
const BIG_BUDGET = 1000;
/**
 * ...the small hostile ones must finish within this one. A stall is exponential or worse (minutes);
 * slow is not a stall: the 10,000-deep Python file takes 1-2 s on an idle machine and more than 5 s
 * with eight test runs sharing two cores, so the bound leaves room for a loaded machine.
 */
const SMALL_BUDGET = 30_000;
const MEMORY_LIMIT = 256;

interface Message {
  ruleId: string | null;
  messageId?: string;
  fatal: boolean;
  severity: number;
  line: number;
  message: string;
}

interface Case {
  name: string;
  /** Undefined when the messages are acceptable; else what is wrong. */
  check(messages: Message[] | undefined): string | undefined;
}

const COMMENT: Partial<Record<Language, string>> = { sql: '--', python: '#', typescript: '//' };

/** A fixture of the language whose expected findings are all per-file ones, with no project files beside it. */
function carrierFor(extensions: readonly string[]): { text: string; expected: Expected[] } | undefined {
  const candidates: string[] = [];
  const walk = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true });
    const alone = entries.every((e) => e.isDirectory() || /\.(sql|py|ts|tsx|js|mjs|cjs)$/.test(e.name));
    for (const e of entries) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (alone && extensions.includes(extname(e.name)) && e.name.startsWith('bad')) candidates.push(join(dir, e.name));
    }
  };
  walk(fixtures);
  candidates.sort((a, b) => Number(!a.includes('no-session-tenant-setting')) - Number(!b.includes('no-session-tenant-setting')) || a.localeCompare(b));
  for (const file of candidates) {
    const text = readFileSync(file, 'utf8');
    const expected = expectationsOf(text);
    if (expected.length > 0 && expected.every((e) => e.ruleId !== 'fatal' && !projectRules.has(e.ruleId))) return { text, expected };
  }
  return undefined;
}

/** Long one-line content of the language, with a trigger so the prefilter lets it through. */
function minified(language: Language, bytes: number): string | undefined {
  const unit =
    language === 'sql'
      ? "(1,'set_config'),(2,'x'),"
      : language === 'python'
        ? "'set_config', 1, 2.5, None, "
        : language === 'typescript'
          ? 'var a=function(b){return b+"set_config"},c=[1,2,3].map(a);'
          : undefined;
  if (!unit) return undefined;
  const body = unit.repeat(Math.ceil(bytes / unit.length));
  if (language === 'sql') return `insert into t values ${body}(0,'');\n`;
  if (language === 'python') return `x = [${body}]\n`;
  return `${body}\n`;
}

function deep(language: Language, depth: number): string | undefined {
  const nested = `${'('.repeat(depth)}1${')'.repeat(depth)}`;
  if (language === 'sql') return `select ${nested};\n`;
  if (language === 'python') return `x = ${nested}\n`;
  if (language === 'typescript') return `const x = ${nested};\nconst y = ${'['.repeat(depth)}${']'.repeat(depth)};\n`;
  return undefined;
}

const INVALID_UTF8 = Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc, 0xed, 0xa0, 0x80, 0xc0, 0xaf]);

const crashed = (messages: Message[]) => messages.find((m) => m.message.startsWith('pgq-audit failed on this file'));
const skipped = (messages: Message[]) => messages.find((m) => m.messageId === 'skipped');
const lines = (messages: Message[]) => messages.filter((m) => m.ruleId !== null).map((m) => `${m.line}:${m.ruleId}`).sort();
const want = (expected: Expected[]) => expected.map((e) => `${e.line}:${e.ruleId}`).sort();

/** No crash, and (unless `maySkip`) not stopped by the budget. */
function sane(messages: Message[] | undefined, maySkip: boolean): string | undefined {
  if (!messages) return 'no result';
  const crash = crashed(messages);
  if (crash) return `crashed: ${crash.message}`;
  if (!maySkip && skipped(messages)) return `stalled: ${skipped(messages)!.message}`;
  return undefined;
}

function buildCorpus(dir: string): Map<string, Case> {
  const cases = new Map<string, Case>();
  const add = (rel: string, content: string | Buffer, check: Case['check']) => {
    const path = join(dir, rel);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
    cases.set(path, { name: rel, check });
  };
  for (const frontEnd of frontEnds) {
    const ext = frontEnd.extensions[0];
    const lang = frontEnd.language;
    const carrier = carrierFor(frontEnd.extensions);
    assert.ok(carrier, `no bad ${lang} fixture with per-file findings only: the corpus needs one to carry findings`);
    const comment = COMMENT[lang];
    mkdirSync(join(dir, lang), { recursive: true });
    // An ordinary bad file: its findings must survive the hostile neighbours.
    if (carrier) {
      add(`${lang}/ordinary${ext}`, carrier.text, (m) => sane(m, false) ?? (JSON.stringify(lines(m!)) === JSON.stringify(want(carrier.expected)) ? undefined : `findings ${lines(m!)} instead of ${want(carrier.expected)}`));
    }
    const bundle = minified(lang, 20 * 1024 * 1024);
    assert.ok(bundle, `no minified ${lang} content`);
    if (bundle) {
      // Not named *.min.*: a folder's scan leaves those out by their name (src/scan/vendored.ts), and this one must get a result.
      add(`big/${lang}/bundle${ext}`, bundle, (m) => {
        const problem = sane(m, true);
        if (problem) return problem;
        return m!.length <= 1 ? undefined : `expected at most one message, got ${m!.length}`;
      });
    }
    const nested = deep(lang, 10_000);
    assert.ok(nested, `no deeply nested ${lang} content`);
    if (nested && carrier) {
      // The nesting comes after the carrier, so for SQL (statements stand alone) its findings stay.
      add(`${lang}/deep${ext}`, `${carrier.text}\n${nested}`, (m) => {
        const problem = sane(m, false);
        if (problem) return problem;
        if (lang === 'sql' && !want(carrier.expected).every((w) => lines(m!).includes(w))) return `lost findings: ${lines(m!)}`;
        return undefined;
      });
    }
    if (carrier && comment) {
      // Invalid bytes in a comment at the end: the findings stay, or the file is one message about its encoding.
      add(`${lang}/invalid-utf8${ext}`, Buffer.concat([Buffer.from(`${carrier.text}\n${comment} `), INVALID_UTF8, Buffer.from('\n')]), (m) => {
        const problem = sane(m, false);
        if (problem) return problem;
        if (JSON.stringify(lines(m!)) === JSON.stringify(want(carrier.expected))) return undefined;
        if (m!.length === 1 && m![0].fatal && /UTF-8|encoding|NUL/i.test(m![0].message)) return undefined;
        return `neither the findings nor one encoding message: ${JSON.stringify(m)}`;
      });
      add(`${lang}/binary${ext}`, Buffer.concat([Buffer.from([0, 1, 2, 3, 0x50, 0x4b, 3, 4]), Buffer.from('set_config discard'), INVALID_UTF8]), (m) => sane(m, false));
    }
    // Loops and dead ends among the links: the walk must end, and nothing behind a link is read.
    symlinkSync('.', join(dir, lang, 'loop'));
    symlinkSync(`self${ext}`, join(dir, lang, `self${ext}`));
    symlinkSync(`b${ext}`, join(dir, lang, `a${ext}`));
    symlinkSync(`a${ext}`, join(dir, lang, `b${ext}`));
    symlinkSync('nowhere', join(dir, lang, `gone${ext}`));
    if (carrier) {
      add(`${lang}/unreadable${ext}`, carrier.text, (m) => {
        const problem = sane(m, false);
        if (problem) return problem;
        if (process.getuid?.() === 0) return lines(m!).length > 0 ? undefined : 'root reads it: its findings are expected';
        return m!.length === 1 && /Could not read the file: EACCES/.test(m![0].message) ? undefined : `expected one 'Could not read' message: ${JSON.stringify(m)}`;
      });
      chmodSync(join(dir, lang, `unreadable${ext}`), 0o000);
    }
    const fifo = spawnSync('mkfifo', [join(dir, lang, `fifo${ext}`)]);
    if (fifo.status !== 0) throw new Error('mkfifo failed');
  }

  // 1,000,000 statements: analysed until the budget or the heap limit stops it, in bounded memory.
  const million = Array.from({ length: 1_000_000 }, (_, i) => (i % 1000 === 0 ? "SET app.tenant = '1';" : `select a from t where id = ${i};`)).join('\n');
  add('big/sql/million.sql', million, (m) => {
    const problem = sane(m, true);
    if (problem) return problem;
    return skipped(m!) || m!.some((x) => x.ruleId === 'no-session-tenant-setting') ? undefined : `neither skipped nor analysed: ${JSON.stringify(m!.slice(0, 3))}`;
  });

  // Every placeholder style of every driver and query-file tool, in .sql.
  const placeholders: [string, boolean][] = [
    ["select set_config('app.tenant', $1, false);", true], // pg, postgres.js, sqlc
    ["select set_config('app.tenant', sqlc.arg(tenant)::text, false);", true],
    ["select set_config('app.tenant', :tenant, false);", false], // pgtyped, aiosql
    ["select set_config('app.tenant', %s, false);", false], // psycopg
    ["select set_config('app.tenant', %(tenant)s, false);", false],
    ["select set_config('app.tenant', ?, false);", false], // knex, JDBC
    ["select set_config('app.tenant', @tenant, false);", false], // Npgsql, SQL Server style
    ["select set_config('app.tenant', {tenant}, false);", false], // psycopg.sql
    ["select set_config('app.tenant', ${tenant}, false);", false], // templates
  ];
  add('sql/placeholders.sql', placeholders.map(([s]) => s).join('\n') + '\n', (m) => {
    const problem = sane(m, false);
    if (problem) return problem;
    const found = new Set(m!.filter((x) => x.ruleId === 'no-session-tenant-setting').map((x) => x.line));
    const missing = placeholders.map(([, must], i) => (must && !found.has(i + 1) ? i + 1 : 0)).filter(Boolean);
    return missing.length ? `no finding on line(s) ${missing.join(', ')}` : undefined;
  });
  // psql's :'var' makes the file a psql script: it runs on a session of its own, so its session write stays quiet.
  add('sql/psql-variable.sql', "select set_config('app.tenant', :'tenant', false);\n", (m) => {
    const problem = sane(m, false);
    if (problem) return problem;
    return m!.length ? `findings in a psql script: ${JSON.stringify(m!.slice(0, 3))}` : undefined;
  });
  return cases;
}

const dir = mkdtempSync(join(tmpdir(), 'pgq-hostile-'));
after(() => {
  for (const frontEnd of frontEnds) {
    try {
      chmodSync(join(dir, frontEnd.language, `unreadable${frontEnd.extensions[0]}`), 0o644);
    } catch {
      // not made
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

// The scan child has its own 180 s bound; the corpus (20 MB files, a million statements) takes longer to build on a loaded machine.
test('the hostile corpus: one result per file, no crash, no stall, bounded memory, findings of ordinary files kept', { timeout: 600_000 }, () => {
  const cases = buildCorpus(dir);
  // The FIFO, named on the command line too: the scan must not block on it.
  const fifo = join(dir, 'sql', 'fifo.sql');
  const small = readdirSync(dir).filter((d) => d !== 'big').map((d) => join(dir, d));
  const runs = [
    // No size cap (by default these files are skipped by their size, before any parse): the budget and the heap limit are what stop them here.
    { paths: [join(dir, 'big')], cwd: dir, timeBudget: BIG_BUDGET, memoryLimit: MEMORY_LIMIT, concurrency: 2, maxFileSize: { sql: 0, python: 0, typescript: 0 } },
    { paths: [...small, fifo], cwd: dir, timeBudget: SMALL_BUDGET, memoryLimit: MEMORY_LIMIT, concurrency: 2, inProcessFiles: 0 },
  ];
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'run-scan.ts'), JSON.stringify(runs)], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 180_000,
  });
  assert.equal(run.status, 0, `the scan process failed: ${run.signal ?? ''} ${run.stderr.slice(-3000)}`);
  const summary = JSON.parse(run.stdout) as { maxRssMb: number; runs: { ms: number; stats: { skipped: number; threads: number }; results: { filePath: string; messages: Message[] }[] }[] };
  const results = summary.runs.flatMap((r) => r.results);
  if (process.env.PGQ_DEBUG) {
    for (const r of summary.runs) console.log(`scan: ${r.ms.toFixed(0)} ms`, JSON.stringify(r.stats));
    for (const r of results) console.log(relative(dir, r.filePath), JSON.stringify(r.messages.map((m) => [m.line, m.ruleId ?? m.messageId ?? m.message.slice(0, 60)])).slice(0, 300));
    console.log(`peak RSS ${summary.maxRssMb.toFixed(0)} MB`);
  }
  const byPath = new Map(results.map((r) => [r.filePath, r.messages]));
  const problems: string[] = [];
  for (const [path, c] of cases) {
    const problem = c.check(byPath.get(path));
    if (problem) problems.push(`${c.name}: ${problem}`);
  }
  // Links and FIFOs are not files to scan: none of them may turn up.
  const unexpected = results.map((r) => relative(dir, r.filePath)).filter((p) => !cases.has(join(dir, p)));
  assert.deepEqual(unexpected, [], 'links, loops and FIFOs are not scanned');
  assert.deepEqual(problems, []);
  assert.ok(summary.runs.every((r) => r.stats.threads > 0), 'on worker threads');
  // Two workers, each with a 256 MB heap limit and a parser stopped after 1 s: far below what
  // analysing the million statements or the 20 MB statements to the end takes (several GB).
  assert.ok(summary.maxRssMb < 1500, `peak memory ${summary.maxRssMb.toFixed(0)} MB`);
});
