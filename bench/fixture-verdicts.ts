// How a build of pgq-audit judges the fixtures: each unit (a file of a rule
// folder, or a project folder) scanned alone, its errors compared with the
// fixtures' `expect:` markers (rule and line). Figures, not a test.
//
//   node --import tsx bench/fixture-verdicts.ts dist                 this build
//   node --import tsx bench/fixture-verdicts.ts /tmp/old/dist dist   an older build first, side by side
//
// An older build: `git worktree add /tmp/old <rev> && (cd /tmp/old && npm ci)`.
// The fixtures are copied without fixtures/pgq-audit.config.json, which older
// builds may not read; each unit is scanned alone, so the config's units do
// not matter.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileResult } from '../src/engine/findings.ts';
import { expectationsOf } from '../test/helpers/expectations.ts';

const builds = process.argv.slice(2).map((d) => resolve(d));
if (builds.length === 0) {
  console.error('usage: node --import tsx bench/fixture-verdicts.ts <dist> [<dist>]');
  process.exit(2);
}
const copy = mkdtempSync(join(tmpdir(), 'pgq-fixture-verdicts-'));
cpSync(join(import.meta.dirname, '../fixtures'), copy, { recursive: true });
rmSync(join(copy, 'pgq-audit.config.json'), { force: true });

const SOURCE = /\.(ts|tsx|js|mjs|cjs|py|sql)$/;
const filesUnder = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : SOURCE.test(n) ? [join(dir, n)] : []));
const units = readdirSync(copy)
  .filter((area) => statSync(join(copy, area)).isDirectory())
  .flatMap((area) => (area === 'projects' ? readdirSync(join(copy, area)).map((p) => join(copy, area, p)) : filesUnder(join(copy, area))));
const isGood = (file: string) => /(^|\/)good[^/]*$/.test(file) || /-good\//.test(file);

interface Row {
  file: string;
  expected: number;
  matched: number;
  extra: number;
}

/** An older build's scan() is loaded from its dist/: only the result shape every build shares is used. */
type Scan = (options: { paths: string[]; cwd: string; concurrency: 'off' }) => Promise<{ results: FileResult[] }>;

async function verdicts(dist: string): Promise<Row[]> {
  const { scan } = (await import(pathToFileURL(join(dist, 'src/scan/scan.js')).href)) as { scan: Scan };
  const rows: Row[] = [];
  for (const unit of units) {
    const { results } = await scan({ paths: [unit], cwd: copy, concurrency: 'off' });
    for (const file of statSync(unit).isDirectory() ? filesUnder(unit) : [unit]) {
      const expected = expectationsOf(readFileSync(file, 'utf8')).map((e) => `${e.line} ${e.ruleId}`);
      const reported = (results.find((r) => r.filePath === file)?.messages ?? []).filter((m) => m.severity === 2).map((m) => `${m.line} ${(m.ruleId ?? 'fatal').replace(/^pgq\//, '')}`);
      let matched = 0;
      for (const e of expected) {
        const i = reported.indexOf(e);
        if (i < 0) continue;
        matched++;
        reported.splice(i, 1);
      }
      rows.push({ file: relative(copy, file), expected: expected.length, matched, extra: reported.length });
    }
  }
  return rows;
}

const sum = (rows: Row[], f: (row: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
for (const dist of builds) {
  const rows = await verdicts(dist);
  const expected = sum(rows, (r) => r.expected);
  const matched = sum(rows, (r) => r.matched);
  const bad = rows.filter((r) => r.expected > 0);
  const good = rows.filter((r) => isGood(r.file));
  console.log(`${dist}`);
  console.log(`  markers found: ${matched} of ${expected} (${((100 * matched) / expected).toFixed(1)}%); errors no marker asks for: ${sum(rows, (r) => r.extra)}`);
  console.log(`  bad files with every marker found: ${bad.filter((r) => r.matched === r.expected).length} of ${bad.length}; good files flagged: ${good.filter((r) => r.extra > 0).length} of ${good.length}`);
}
rmSync(copy, { recursive: true, force: true });
