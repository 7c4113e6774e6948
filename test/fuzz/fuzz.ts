// Property tests by mutation of the fixtures, for every registered front end
// and the SQL analyzer. Run with a fixed seed by the test suite
// (fuzz.test.ts) and longer, with a fresh seed, by `npm run bench`.
//
// Properties:
// - no crash: no "pgq-audit failed on this file", and analyzeSql never throws
//   (every placeholder style, random holes) and keeps its spans in the text;
// - no hang: the scan runs on worker threads with a time budget, and no file
//   may be skipped for taking too long;
// - the prefilter and the workers change nothing: the findings of the pool
//   scan with the prefilter equal those of an in-process scan without it
//   (except where a parser ran out of stack: workers have more of it);
// - same findings on unchanged statements: where the mutation only garbles
//   the words of one statement that carries no fact (a plain SELECT, say, not
//   a named prepared statement or a pool callback's), every per-file finding
//   of the original is still reported, at the same place.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative } from 'node:path';
import { supportedExtensions } from '../../src/languages/extensions.ts';
import { frontEndFor } from '../../src/languages/index.ts';
import { rules as allRules } from '../../rules/index.ts';
import { activeRules } from '../../src/engine/rule-config.ts';
import type { Finding } from '../../src/engine/findings.ts';
import { analysisConfig } from '../../src/scan/analysis.ts';
import { scanFileText } from '../../src/scan/analyze-file.ts';
import { loadFrontEnds } from '../../src/languages/registry.ts';
import { scan } from '../../src/scan/scan.ts';
import { analyzeSql, loadSqlParser, type StatementFacts } from '../../src/sql/index.ts';
import { prng } from '../helpers/prng.ts';

export interface FuzzOptions {
  seed: number;
  iterations: number;
  /** The repository's fixtures/ folder. */
  fixtures: string;
  /** Per-file budget of the pool scan; a file over it is a hang. */
  timeBudget?: number;
  /** Keep the generated cases (their folder is printed) to debug a failure. */
  keep?: boolean;
}

export interface FuzzReport {
  cases: number;
  /** Cases per language, e.g. "sql 120, python 60". */
  byLanguage: string;
  /** Cases whose mutation was confined to a statement without facts. */
  confined: number;
  failures: string[];
  ms: number;
}

export { prng };

type Random = () => number;
const int = (random: Random, n: number) => Math.floor(random() * n);
const pick = <T>(random: Random, list: readonly T[]): T => list[int(random, list.length)];

/** Characters that matter to lexers: quotes, dollars, braces, comment starts, escapes, newlines, odd Unicode. */
const NASTY = ["'", '"', '`', '$', '$$', '${', '{', '}', '(', ')', ';', '--', '/*', '*/', '#', '\\', '\n', '\r\n', '\t', '%s', '%(x)s', '?', ':x', '\u0000', '\ud800', '\u{1F600}', 'é', '\u2028', 'E\'', 'U&"'];
const WORDS = ['select', 'set', 'set_config', 'begin', 'commit', 'rollback', 'discard all', 'for update skip locked', 'current_setting', 'async', 'with', 'def', 'await', 'release()', 'reset='];

/** A random edit of the text: no grammar kept, anything may break. */
export function mutate(text: string, random: Random): string {
  let out = text;
  const edits = 1 + int(random, 3);
  for (let e = 0; e < edits; e++) {
    const at = int(random, out.length + 1);
    switch (int(random, 9)) {
      case 0: // delete a range
        out = out.slice(0, at) + out.slice(Math.min(out.length, at + 1 + int(random, 40)));
        break;
      case 1: // insert lexically nasty characters
        out = out.slice(0, at) + Array.from({ length: 1 + int(random, 4) }, () => pick(random, NASTY)).join('') + out.slice(at);
        break;
      case 2: // insert a keyword the rules and front ends look for
        out = `${out.slice(0, at)} ${pick(random, WORDS)} ${out.slice(at)}`;
        break;
      case 3: {
        // duplicate a range
        const end = Math.min(out.length, at + int(random, 200));
        out = out.slice(0, end) + out.slice(at, end) + out.slice(end);
        break;
      }
      case 4: {
        // swap two lines
        const lines = out.split('\n');
        const a = int(random, lines.length);
        const b = int(random, lines.length);
        [lines[a], lines[b]] = [lines[b], lines[a]];
        out = lines.join('\n');
        break;
      }
      case 5: // truncate
        out = out.slice(0, at);
        break;
      case 6: {
        // deep nesting
        const depth = 50 + int(random, 2000);
        out = out.slice(0, at) + '('.repeat(depth) + '1' + ')'.repeat(int(random, 2) ? depth : 0) + out.slice(at);
        break;
      }
      case 7: {
        // repeat a line many times
        const lines = out.split('\n');
        const line = pick(random, lines) ?? '';
        out = `${out}\n${`${line}\n`.repeat(10 + int(random, 200))}`;
        break;
      }
      default: // flip a character's case
        out = out.slice(0, at) + (out[at] === out[at]?.toUpperCase() ? (out[at] ?? '').toLowerCase() : (out[at] ?? '').toUpperCase()) + out.slice(at + 1);
    }
  }
  return out;
}

/** True when the statement carries no fact at all: garbling it must not change any other finding. */
function inert(statement: StatementFacts): boolean {
  for (const [key, value] of Object.entries(statement)) {
    if (key === 'kind' || key === 'span') continue;
    if (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== false) return false;
  }
  return true;
}

/** The site's span is SQL text: a .sql file, or a string or template of the host (after Python's prefixes). */
function holdsSqlText(text: string, file: string, span: { start: number; end: number }): boolean {
  return extname(file).toLowerCase() === '.sql' || /^[rRbBfFuU]{0,2}['"`]/.test(text.slice(span.start, span.start + 3));
}

/** Letters (no e/E: E'...' changes how a string lexes), digits and spaces. */
const SAFE = 'abcdfghijklmnopqrstuvwxyz0123456789  ';

/**
 * Garbles words inside one fact-free statement, keeping the length and every
 * character that lexes (quotes, escapes, placeholders, newlines), so the
 * host file still parses the same and no offset moves. Undefined when the
 * file has no such statement.
 */
export function confinedMutation(text: string, statements: readonly StatementFacts[], random: Random): string | undefined {
  const candidates = statements.filter((s) => inert(s) && !/[{}%$?:\\'"`]/.test(text.slice(s.span.start, s.span.end)));
  if (candidates.length === 0) return undefined;
  const { span } = pick(random, candidates);
  const words: { start: number; end: number }[] = [];
  const re = /[A-Za-z0-9_]+/g;
  const body = text.slice(span.start, span.end);
  for (let m = re.exec(body); m; m = re.exec(body)) words.push({ start: span.start + m.index, end: span.start + m.index + m[0].length });
  if (words.length === 0) return undefined;
  const word = pick(random, words);
  const junk = Array.from({ length: word.end - word.start }, () => pick(random, [...SAFE])).join('');
  return text.slice(0, word.start) + junk + text.slice(word.end);
}

const key = (f: Finding) => `${f.line}:${f.column}-${f.endLine}:${f.endColumn} ${f.ruleId} ${f.messageId ?? ''}`;
const ruleFindings = (messages: readonly Finding[]) => messages.filter((m) => m.ruleId !== null).map(key).sort();

function sourceFiles(dir: string, extensions: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (extensions.includes(extname(entry.name).toLowerCase())) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

function checkSpans(label: string, text: string, statements: readonly StatementFacts[], failures: string[]): void {
  const inText = (s: { start: number; end: number }) => s.start >= 0 && s.end >= s.start && s.end <= text.length;
  for (const statement of statements) {
    const bad = !inText(statement.span) || JSON.stringify(statement).match(/"start":-?\d+,"end":-?\d+/g)?.some((m) => {
      const [start, end] = m.match(/-?\d+/g)!.map(Number);
      return !inText({ start, end });
    });
    if (bad) {
      failures.push(`${label}: a span outside the text (length ${text.length}) in ${statement.kind}`);
      return;
    }
  }
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  await loadSqlParser();
  // scanFileText analyses with the front ends loaded so far (the scan loads them on demand).
  await loadFrontEnds(['sql', 'python', 'typescript']);
  const random = prng(options.seed);
  const extensions = supportedExtensions();
  const fixtures = sourceFiles(options.fixtures, extensions);
  if (fixtures.length === 0) throw new Error(`no fixtures under ${options.fixtures}`);
  const config = analysisConfig(activeRules(), allRules);
  const dir = mkdtempSync(join(tmpdir(), 'pgq-fuzz-'));
  const failures: string[] = [];
  const perLanguage = new Map<string, number>();
  const confined: { path: string; label: string; expected: string[] }[] = [];
  const labels = new Map<string, string>();
  try {
    for (let i = 0; i < options.iterations; i++) {
      let fixture = pick(random, fixtures);
      let original = readFileSync(fixture, 'utf8');
      // About a third of the cases mutate only statements without facts. Not every fixture has one
      // (ORM fixtures have few): draw again, so the share does not depend on the fixture set.
      let confinedText: string | undefined;
      if (random() < 0.35) {
        for (let draw = 0; draw < 25 && confinedText === undefined; draw++) {
          if (draw > 0) {
            fixture = pick(random, fixtures);
            original = readFileSync(fixture, 'utf8');
          }
          const model = frontEndFor(fixture)!.parse(original, fixture, {});
          // A site that is a named (prepared) statement or runs in a pool callback carries a fact of its own; a site
          // whose SQL a builder or ORM call makes (`tx.shipment.count()`) has host code, not SQL text, at its span.
          const statements = model.sites
            .filter((site) => !site.preparedName && !site.callback && holdsSqlText(original, fixture, site.span))
            .flatMap((site) => site.analysis.statements)
            .filter((s) => !s.routine);
          confinedText = confinedMutation(original, statements, random);
        }
      }
      const rel = relative(options.fixtures, fixture);
      const frontEnd = frontEndFor(fixture)!;
      // The fixture's folder comes along (project files such as requirements.txt decide findings too).
      const caseDir = join(dir, String(i).padStart(5, '0'));
      const path = join(caseDir, rel);
      mkdirSync(dirname(path), { recursive: true });
      for (const sibling of readdirSync(dirname(fixture))) {
        const from = join(dirname(fixture), sibling);
        if (statSync(from).isFile() && !extensions.includes(extname(sibling).toLowerCase())) copyFileSync(from, join(dirname(path), sibling));
      }
      const label = `case ${i} (seed ${options.seed}): ${rel}`;
      labels.set(path, label);
      perLanguage.set(frontEnd.language, (perLanguage.get(frontEnd.language) ?? 0) + 1);

      let text = confinedText;
      if (text !== undefined) {
        confined.push({ path, label: `${label} (confined)`, expected: ruleFindings(scanFileText(path, original, config).messages) });
      }
      text ??= mutate(original, random);
      writeFileSync(path, text);

      if (frontEnd.language === 'sql') {
        // The analyzer alone, with every placeholder style and random holes.
        for (const placeholders of ['dollar', 'psycopg', 'qmark'] as const) {
          const holes: { start: number; end: number }[] = [];
          for (let h = int(random, 3); h > 0; h--) {
            const start = int(random, text.length + 1);
            holes.push({ start, end: Math.min(text.length, start + 1 + int(random, 6)) });
          }
          holes.sort((a, b) => a.start - b.start);
          const disjoint = holes.filter((h, k) => k === 0 || h.start >= holes[k - 1].end);
          try {
            const analysis = analyzeSql(text, { placeholders, holes: disjoint });
            checkSpans(`${label} analyzeSql(${placeholders})`, text, analysis.statements, failures);
          } catch (error) {
            failures.push(`${label}: analyzeSql(${placeholders}) threw ${(error as Error).stack ?? error}`);
          }
        }
      }
    }

    // The real scan, twice: pool + prefilter + budget, and in-process without the prefilter.
    const budget = options.timeBudget ?? 10_000;
    const pooled = await scan({ paths: [dir], cwd: dir, concurrency: 2, inProcessFiles: 0, timeBudget: budget });
    const plain = await scan({ paths: [dir], cwd: dir, concurrency: 'off', prefilter: false });
    const plainByPath = new Map(plain.results.map((r) => [r.filePath, r]));
    for (const result of pooled.results) {
      const label = labels.get(result.filePath) ?? result.filePath;
      for (const message of result.messages) {
        if (message.messageId === 'skipped') failures.push(`${label}: hang: ${message.message}`);
        if (message.message.startsWith('pgq-audit failed on this file')) failures.push(`${label}: crash: ${message.message.split('\n').slice(0, 4).join(' | ')}`);
      }
      const other = plainByPath.get(result.filePath);
      const a = ruleFindings(result.messages);
      const b = other ? ruleFindings(other.messages) : [];
      // How deep a parser may recurse depends on the thread's stack (4 MB in a worker, under 1 MB in
      // the main thread): a file one of them could not parse for it is not a difference of ours.
      const stack = [...result.messages, ...(other?.messages ?? [])].some((m) => /Maximum call stack size exceeded/.test(m.message));
      if (!stack && a.join('\n') !== b.join('\n')) {
        failures.push(`${label}: the prefilter or the workers changed the findings:\n    with:    ${a.join('; ')}\n    without: ${b.join('; ')}`);
      }
    }
    for (const c of confined) {
      const now = ruleFindings(scanFileText(c.path, readFileSync(c.path, 'utf8'), config).messages);
      const lost = c.expected.filter((f) => !now.includes(f));
      const gained = now.filter((f) => !c.expected.includes(f));
      if (lost.length > 0 || gained.length > 0) {
        failures.push(`${c.label}: garbling a statement without facts changed other findings: lost ${lost.join('; ') || 'none'}, gained ${gained.join('; ') || 'none'}`);
      }
    }
  } finally {
    if (options.keep) console.log(`fuzz cases kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  return {
    cases: options.iterations,
    byLanguage: [...perLanguage].map(([l, n]) => `${l} ${n}`).join(', '),
    confined: confined.length,
    failures,
    ms: performance.now() - started,
  };
}
