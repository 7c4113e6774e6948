// `npm run mutation`: mutation testing on real code. For every clean case of the development corpus
// (its labels.json), each generic operator of bench/mutation-operators.ts that finds its pattern in the
// label's lines makes the smallest edit that turns the correct code into the rule's bug; the mutant is
// written into a temporary copy of that repository's stored files, scanned, and counts as reported
// when a finding of the operator's rule lies within the label's lines (±3, as the corpus scores a bug)
// that the unmutated copy does not have there. A clean case the scan cannot tell from its broken twin
// proves nothing. The corpus is read at run time and never copied into the project.
//
//   npm run mutation                                  (after npm run build)
//   npm run mutation -- --only <repo> --diff --why   one repository, with each mutant's diff and findings
//   npm run mutation -- --dry                         the mutants, without scanning
//
// Flags: --corpus <dir> (default ../shared/corpus from the project root), --bin <bin/pgq-audit.js>,
// --only <substring of label repo/path/rules>, --keep (keep temp dirs), --why, --diff, --dry, --json,
// --concurrency <n> (scans at once, default 2). A measuring tool: no test asserts its figures.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OPERATORS, type Edit, type Range } from './mutation-operators.ts';

interface Label {
  set: string;
  repo: string;
  path: string;
  lines: string;
  language: string;
  rules: string[];
  verdict: 'bug' | 'clean';
  reason?: string;
}

interface Finding {
  ruleId: string;
  line: number;
  message: string;
}

interface Mutant {
  id: string;
  label: Label;
  operator: string;
  rules: string[];
  at: number;
  ranges: Range[];
  text: string;
  diff: string[];
  result?: 'reported' | 'missed' | 'already flagged' | 'scan failed';
  findings?: Finding[];
}

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    corpus: { type: 'string', default: join(root, '..', 'shared', 'corpus') },
    bin: { type: 'string', default: join(root, 'bin', 'pgq-audit.js') },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    why: { type: 'boolean', default: false },
    diff: { type: 'boolean', default: false },
    dry: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '2' },
  },
  strict: true,
});
const corpus = resolve(values.corpus);
const bin = resolve(values.bin);
if (!existsSync(join(corpus, 'labels.json'))) {
  console.error(`mutation: no labels.json in ${corpus}: pass the development corpus with --corpus <dir>`);
  process.exit(2);
}
if (!values.dry && !existsSync(bin)) {
  console.error(`mutation: no pgq-audit at ${bin}: run npm run build, or pass --bin <path to bin/pgq-audit.js>`);
  process.exit(2);
}

const SLACK = 3;
const parseRanges = (spec: string): Range[] =>
  spec.split(',').map((part) => {
    const [a, b = a] = part.replace(/[^0-9-]/g, '').split('-').map(Number);
    return [a, b];
  });
const within = (ranges: Range[], line: number): boolean => ranges.some(([a, b]) => line >= a - SLACK && line <= b + SLACK);

/** The file after the edits (each in the original's lines), and the label's ranges moved with them. */
function applyEdits(lines: string[], ranges: Range[], edits: Edit[]): { lines: string[]; ranges: Range[] } {
  const out = [...lines];
  for (const e of [...edits].sort((x, y) => y.line - x.line)) out.splice(e.line - 1, e.remove, ...e.insert);
  const moved = ranges.map(([a, b]): Range => {
    let [na, nb] = [a, b];
    for (const e of edits) {
      const delta = e.insert.length - e.remove;
      if (e.line < a) [na, nb] = [na + delta, nb + delta];
      else if (e.line <= b) nb += delta;
    }
    return [na, Math.max(na, nb)];
  });
  return { lines: out, ranges: moved };
}

/** A unified-looking diff of the edits, for --diff. */
function showDiff(lines: string[], edits: Edit[], path: string): string[] {
  const out = [`--- ${path}`];
  for (const e of [...edits].sort((x, y) => x.line - y.line)) {
    out.push(`@@ ${e.line} @@`);
    for (let k = 0; k < e.remove; k++) out.push(`-${lines[e.line - 1 + k]}`);
    for (const text of e.insert) out.push(`+${text}`);
  }
  return out;
}

const labels = (JSON.parse(readFileSync(join(corpus, 'labels.json'), 'utf8')) as Label[]).filter((l) => l.verdict === 'clean');
const labelId = (l: Label) => `${l.repo}/${l.path}:${l.lines} [${l.rules.length > 1 ? 'queue family' : l.rules[0]}]`;
const folderOf = (l: Label) => join(corpus, l.set, l.repo.replace('/', '+'));
const chosen = labels.filter((l) => !values.only || `${l.repo}/${l.path} ${l.rules.join(' ')}`.includes(values.only));

const mutants: Mutant[] = [];
const withoutOperator: Label[] = [];
for (const label of chosen) {
  const original = readFileSync(join(folderOf(label), label.path), 'utf8');
  const lines = original.split('\n');
  const ranges = parseRanges(label.lines);
  let made = 0;
  for (const op of OPERATORS) {
    const rules = op.rules.filter((r) => label.rules.includes(r));
    if (!rules.length) continue;
    for (const site of op.find(lines, ranges)) {
      const mutated = applyEdits(lines, ranges, site.edits);
      const text = mutated.lines.join('\n');
      if (text === original) continue;
      made++;
      mutants.push({
        id: `m${mutants.length + 1}`,
        label,
        operator: op.name,
        rules,
        at: site.at,
        ranges: mutated.ranges,
        text,
        diff: showDiff(lines, site.edits, label.path),
      });
    }
  }
  if (!made) withoutOperator.push(label);
}

/** Runs the scan on a folder; its findings by path relative to the folder. */
function scan(folder: string): Promise<Map<string, Finding[]> | string> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, 'scan', '--format', 'json', folder], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('close', (code) => {
      try {
        const report = JSON.parse(Buffer.concat(out).toString('utf8')) as { filePath: string; messages: Finding[] }[];
        const byPath = new Map<string, Finding[]>();
        for (const file of report) {
          const key = relative(folder, resolve(file.filePath)).split('\\').join('/');
          byPath.set(key, file.messages.filter((m) => m.ruleId).map((m) => ({ ...m, ruleId: String(m.ruleId).replace(/^pgq\//, '') })));
        }
        done(byPath);
      } catch {
        done(`no JSON report (exit ${code}) ${Buffer.concat(err).toString('utf8').slice(0, 300)}`);
      }
    });
  });
}

async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

const hits = (findings: Finding[] | undefined, rules: string[], ranges: Range[]) =>
  (findings ?? []).filter((f) => rules.includes(f.ruleId) && within(ranges, f.line));

const started = Date.now();
const temps: string[] = [];
if (!values.dry) {
  const base = mkdtempSync(join(tmpdir(), 'pgq-mutation-'));
  temps.push(base);
  // The unmutated repositories first: a mutant counts only with a finding its original lacks.
  const baseline = new Map<string, Map<string, Finding[]> | string>();
  const folders = [...new Set(mutants.map((m) => folderOf(m.label)))];
  await pool(folders, Number(values.concurrency), async (folder) => {
    baseline.set(folder, await scan(folder));
  });
  await pool(mutants, Number(values.concurrency), async (m) => {
    const copy = join(base, m.id);
    cpSync(folderOf(m.label), copy, { recursive: true });
    writeFileSync(join(copy, m.label.path), m.text);
    const report = await scan(copy);
    const before = baseline.get(folderOf(m.label));
    if (typeof report === 'string' || typeof before === 'string') {
      m.result = 'scan failed';
      m.findings = [{ ruleId: '', line: 0, message: typeof report === 'string' ? report : (before as string) }];
    } else {
      m.findings = report.get(m.label.path) ?? [];
      const was = hits(before?.get(m.label.path), m.rules, parseRanges(m.label.lines)).length;
      const now = hits(m.findings, m.rules, m.ranges).length;
      m.result = was ? (now > was ? 'reported' : 'already flagged') : now ? 'reported' : 'missed';
    }
    if (!values.keep) rmSync(copy, { recursive: true, force: true });
  });
  if (!values.keep) rmSync(base, { recursive: true, force: true });
}

const fmtRanges = (ranges: Range[]) => ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');
const where = (m: Mutant) => `${m.label.repo}/${m.label.path}:${m.at}`;
const reported = mutants.filter((m) => m.result === 'reported');
const totalClean = labels.length;

if (values.json) {
  console.log(
    JSON.stringify(
      {
        mutants: mutants.map(({ text: _text, label, ...m }) => ({ ...m, label: labelId(label), ranges: fmtRanges(m.ranges) })),
        withoutOperator: withoutOperator.map(labelId),
        reported: reported.length,
        total: mutants.length,
        cleanCases: totalClean,
      },
      null,
      1,
    ),
  );
} else {
  for (const m of mutants) {
    console.log(`${(m.result ?? 'mutant').padEnd(15)} ${m.operator.padEnd(34)} ${where(m)}  (${m.rules.join('|')}, lines ${fmtRanges(m.ranges)})`);
    if (values.diff) console.log(`    ${m.diff.join('\n    ')}`);
    if (values.why && m.result !== 'reported') {
      const own = m.findings ?? [];
      console.log(own.length ? own.map((f) => `    ${f.line}: ${f.ruleId} ${f.message.slice(0, 160)}`).join('\n') : '    (no finding in this file)');
    }
  }
  if (!values.dry) {
    const missed = mutants.filter((m) => m.result !== 'reported');
    console.log(`\nmissed mutants (${missed.length}):`);
    for (const m of missed) console.log(`  ${m.result?.padEnd(15)} ${labelId(m.label)}  ${m.operator}  ${where(m)}`);
    console.log('\n| rule | mutants reported |\n| --- | --- |');
    // By the rules a mutant must be reported by (the queue family's operators accept either of two).
    const rules = [...new Set(mutants.map((m) => m.rules.join('|')))].sort();
    for (const rule of rules) {
      const of = mutants.filter((m) => m.rules.join('|') === rule);
      console.log(`| ${rule} | ${of.filter((m) => m.result === 'reported').length}/${of.length} |`);
    }
    console.log(`\n${((Date.now() - started) / 1000).toFixed(0)} s, ${values.concurrency} at once${values.keep ? `; kept ${temps.join(' ')}` : ''}`);
  }
  console.log(`\nclean cases without an operator (${withoutOperator.length}):`);
  for (const l of withoutOperator) console.log(`  ${labelId(l)}`);
}
const scope = values.only ? chosen.length : totalClean;
console.log(`mutation: ${reported.length}/${mutants.length} mutants reported; ${withoutOperator.length}/${scope} clean cases without an operator`);
