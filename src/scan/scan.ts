// The programmatic entry point: `scan({ paths })` is what the CLI runs and
// what tests call directly.
//
// The pipeline, built to run at close to the speed of reading the files:
// discover -> read each file once (main thread) -> prefilter on the rules'
// textual triggers (most files stop here, unparsed) -> cache lookup by
// content hash -> analyse the rest (in-process for small scans and on two
// cores, else across worker threads, in batches, and the main thread once it
// has read everything; a per-file time budget either way) -> cross-file rules over the
// facts of every file -> suppressions. Output order is the sorted file order,
// whatever order the work finished in.
import { resolve } from 'node:path';
import { ruleMeta } from '../../rules/meta.ts';
import { UNIT_MARKERS, UnitResolver } from '../config/units.ts';
import type { LoadedConfig } from '../config/load.ts';
import { countSeverities, type FileResult, type Finding } from '../engine/findings.ts';
import { addProjectFindings, runProjectRules, type ProjectFacts, type UnitOf } from '../engine/project-pass.ts';
import { activeRules, type RuleSettings } from '../engine/rule-config.ts';
import { languageOf, LANGUAGES, supportedExtensions } from '../languages/extensions.ts';
import type { Severity } from '../model/index.ts';
import { applySuppressions, type FileDirectives } from '../suppressions/index.ts';
import { analysisConfig, fileMessage, type FileAnalysis } from './analysis.ts';
import { Analyzer, IN_PROCESS_MAX_FILES } from './analyzer.ts';
import { AnalysisCache, cacheFilePath, contentHash, defaultCacheLocation, SKIPPED, statKey } from './cache.ts';
import { ContextHasher } from './context-hasher.ts';
import { discoverFiles } from './discover.ts';
import { autoUsesWorkers } from './pool.ts';
import { ImportChance, withDependencies } from './import-chance.ts';
import { beginScan } from '../languages/typescript/flow/modules.ts';
import { nextScanGeneration } from '../scan-generation.ts';
import { buildPrefilter } from './prefilter.ts';
import { asUtf8, decodeText, readErrorReason, readRegularFile, SOURCE_MAX_BYTES, type FileReadError } from '../read-file.ts';
import { selectFiles, type FileSelection } from './select-files.ts';
import { leftOutByShape } from './vendored.ts';
import { DEFAULT_MAX_FILE_SIZE, type FileSizeCaps } from '../config/file-size.ts';
import { DEFAULT_SCAN_TIME_BUDGET, isSkip, overSizeCap, stoppedMessage, withinLimits } from './skips.ts';

/** Default per-routine time budget of `pgq-audit db`, in ms (a scan's is DEFAULT_SCAN_TIME_BUDGET, skips.ts). */
export const DEFAULT_TIME_BUDGET = 10_000;
/** Default old-generation heap limit of each worker thread, in MB. */
export const DEFAULT_MEMORY_LIMIT = 512;

export interface ScanOptions {
  paths: readonly string[];
  cwd?: string;
  rules?: RuleSettings;
  ignores?: readonly string[];
  queryFunctions?: readonly string[];
  /** How .sql files that are not PostgreSQL are treated (the config's "sql" key). */
  sql?: { dialectDetection?: 'warn' | 'quiet' | 'off' };
  /** --changed-since, --shard and config ignores (src/scan/select-files.ts). */
  selection?: FileSelection;
  /**
   * Report the files of `paths` only, but read cross-file facts from every file of their project
   * units (under cwd), as a scan of the whole project would (--project-facts: pre-commit names
   * the staged files, and a claim's heartbeat may be in a file that is not staged).
   */
  projectFacts?: boolean;
  /**
   * The config whose `units` and `defaultSchema` decide every file's project unit (the CLI's
   * --config). By default each file's nearest config does (src/config/units.ts).
   */
  unitConfig?: Pick<LoadedConfig, 'base' | 'config'>;
  /** Severity of pgq/unused-suppression (default warn). */
  reportUnusedSuppressions?: Severity;
  /** Called after each file is analysed. */
  onProgress?: (progress: { done: number; total: number; file: string }) => void;
  /**
   * Worker threads for the analysis: a number (at most the machine's cores: more is capped), 'auto' (the default: the
   * available cores less one, at most 4, on a machine of three cores or
   * more; in-process on fewer, where workers do not pay: pool.ts) or 'off'
   * (everything in-process). Small scans run in-process whatever this says; in-process
   * analysis has the same time budget.
   */
  concurrency?: number | 'auto' | 'off';
  /**
   * Per-file wall-clock budget in ms (default 60,000; 0 for none): a last resort, non-deterministic. A
   * file over it is reported as skipped.
   */
  timeBudget?: number;
  /** Bytes above which a file is skipped, per language (skips.ts; 0: no cap): decided by size, the same every run. */
  maxFileSize?: Partial<FileSizeCaps>;
  /** Steps of work above which a file's analysis is stopped and the file skipped (src/work.ts; 0: no bound): counted, the same every run. */
  maxAnalysisSteps?: number;
  /** Heap limit per worker thread in MB (default 512). A file that needs more is reported as skipped. */
  memoryLimit?: number;
  /** Scan TS/JS bundles and generated files too (--include-generated): by default their shape leaves them out (vendored.ts). */
  includeGenerated?: boolean;
  /** Reuse the analysis of unchanged files (--cache). */
  cache?: boolean;
  /** The cache file, or the folder of cache.json (default node_modules/.cache/pgq-audit/ under cwd). */
  cacheLocation?: string;
  /** false parses every file, whatever its text (tests compare both). Default true. */
  prefilter?: boolean;
  /**
   * Scans with at most this many files to parse (and under 512 KB of them, none over 256 KB)
   * run in-process; default 32. 0 sends every file to the workers.
   */
  inProcessFiles?: number;
  /** Return the cross-file facts of every file read (pgq-audit db --project lends them to the database's objects). */
  keepFacts?: boolean;
}

export interface ScanStats {
  /** Files read (the reported ones, plus those that lend facts to cross-file rules). */
  files: number;
  bytes: number;
  /** Files that passed the prefilter. */
  parsed: number;
  /** Of those, taken from the cache. */
  cached: number;
  /** Files skipped with a message: over the time budget or memory limit, or a bundle named (by its shape). */
  skipped: number;
  /** Worker threads used; 0 when the analysis ran in-process. */
  threads: number;
  /** Milliseconds per phase. In-process, files are analysed as they are read: `read` leaves that time out, `analyse` has it. */
  timings: { discover: number; read: number; analyse: number; project: number; cache: number; total: number };
  /** The cache file and why its old contents were not used, when they were not. */
  cache?: { file: string; discarded?: string; unsaved?: string };
}

export interface ScanResult {
  results: FileResult[];
  errorCount: number;
  warningCount: number;
  stats: ScanStats;
  /** With keepFacts: file -> the facts each cross-file rule collected from it. */
  facts?: ReadonlyMap<string, ProjectFacts>;
}

interface FileOutcome {
  result: FileResult;
  facts?: ProjectFacts;
  directives?: FileDirectives;
}

export async function scan(options: ScanOptions): Promise<ScanResult> {
  const started = performance.now();
  const startedAt = Date.now();
  nextScanGeneration();
  const cwd = options.cwd ?? process.cwd();
  const active = activeRules(options.rules);
  // The walk notes which folders hold a unit's marker: the units below are then found without a stat per folder.
  const listing = { names: UNIT_MARKERS, folders: new Map<string, string[]>() };
  const discovered = await discoverFiles(options.paths, { extensions: supportedExtensions(), ignores: options.ignores, cwd, listing });
  const { files, all } = selectFiles(discovered, options.selection, cwd);
  // Cross-file rules decide per project unit: a parent folder's scan gives each unit what it gets alone.
  const units = new UnitResolver({ config: options.unitConfig, cwd, listed: listing.folders });
  // Files outside the selection are read only when a cross-file rule needs their facts.
  const reported = new Set(files);
  const collects = active.some((a) => a.rule.crossFile);
  let project = all;
  if (options.projectFacts && collects) {
    const roots = units.foldersOf(options.paths.map((path) => resolve(cwd, path)), cwd);
    const unitFiles = selectFiles(await discoverFiles(roots, { extensions: supportedExtensions(), ignores: options.ignores, cwd }), { ignores: options.selection?.ignores }, cwd).all;
    project = [...new Set([...all, ...unitFiles])].sort();
  }
  const read = collects ? project : files;
  // A file named on the command line is scanned, as ESLint lints a file it is given by name, unless it is a bundle (vendored.ts).
  const named = new Set(options.paths.map((p) => resolve(cwd, p)));
  const discoveredAt = performance.now();

  const config = analysisConfig(active, ruleMeta, options.queryFunctions, options.sql, options.maxAnalysisSteps);
  const prefilter = buildPrefilter(active, { enabled: options.prefilter !== false });
  const caps: FileSizeCaps = { ...DEFAULT_MAX_FILE_SIZE, ...options.maxFileSize };
  const cache = options.cache
    ? new AnalysisCache(cacheFilePath(options.cacheLocation ?? defaultCacheLocation(cwd), cwd), config, {
        frontEnds: LANGUAGES.map((l) => [l.language, ...l.extensions]),
        triggers: [...prefilter.triggers],
        generated: options.includeGenerated === true,
        caps,
      })
    : undefined;
  const context = cache ? new ContextHasher(cache) : undefined;
  const concurrency = options.concurrency ?? 'auto';
  const inProcess = concurrency === 'auto' && !autoUsesWorkers();
  const analyzer = new Analyzer(config, {
    concurrency: inProcess ? 'off' : concurrency,
    isolateLargeFiles: inProcess,
    timeBudget: options.timeBudget ?? DEFAULT_SCAN_TIME_BUDGET,
    memoryLimit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT,
    inProcessFiles: options.inProcessFiles ?? IN_PROCESS_MAX_FILES,
  });

  const outcomes: FileOutcome[] = new Array(read.length);
  const stats: ScanStats = {
    files: read.length,
    bytes: 0,
    parsed: 0,
    cached: 0,
    skipped: 0,
    threads: 0,
    timings: { discover: discoveredAt - started, read: 0, analyse: 0, project: 0, cache: 0, total: 0 },
  };
  let done = 0;
  const finish = (index: number, outcome: FileOutcome) => {
    outcomes[index] = outcome;
    done++;
    options.onProgress?.({ done, total: read.length, file: read[index] });
  };

  const pending: Promise<void>[] = [];
  // Files the prefilter dropped that import names from project modules: decided once every file is read (import-chance.ts).
  const chance = new ImportChance(prefilter);
  const later: number[] = [];
  // The TS module reader's stats and resolutions kept until the analysis ends (flow/modules.ts).
  const endScan = beginScan();
  try {
    let slice = performance.now();
    // Most files of a cached scan take only the first few lines of this loop: they are kept lean.
    // The files held back (later) come round again after the rest.
    for (let step = 0; step < read.length + later.length; step++) {
      const index = step < read.length ? step : later[step - read.length];
      const file = read[index];
      // Reads are synchronous (the fastest way to read many small files); yield now and then so
      // worker results are taken in while the rest is read.
      if (performance.now() - slice > 20) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
      // With --cache, an unchanged file (by its stat) is not read at all.
      const stat = cache ? statKey(file, startedAt) : undefined;
      // A file held back (import-chance.ts) comes round again for its verdict alone: read and prefiltered
      // again only when it is to be analysed. Most are dropped, and a second read and prefilter of each
      // cost more than the verdicts (480 of the bench's 600 Python files are held).
      const second = step >= read.length ? chance.verdict(file) : undefined;
      if (second && !second.analyse) {
        cache?.skip(file, stat, second.dependencies);
        finish(index, { result: fileResult(file) });
        continue;
      }
      let known = cache?.byStat(file, stat);
      // Left out by an earlier walk, but named now: read again, its shape may call for a message.
      if (known === SKIPPED && named.has(file)) known = undefined;
      if (known === SKIPPED) {
        finish(index, { result: fileResult(file) });
        continue;
      }
      const language = languageOf(file);
      if (known && language && withinLimits(known.analysis, analyzer.options) && known.hash === `${known.hash.split('+')[0]}+${context!.of(file, language)}`) {
        stats.parsed++;
        stats.cached++;
        if (isSkip(known.analysis)) stats.skipped++;
        // Not read: a report that shows the text reads it (src/report/source.ts).
        finish(index, outcomeOf(file, undefined, known.analysis));
        continue;
      }
      let raw: Buffer;
      try {
        // Only regular files: a FIFO or a device named on the command line is one message, never a hang.
        raw = readRegularFile(file, SOURCE_MAX_BYTES);
      } catch (error) {
        if ((error as FileReadError).code === 'EFBIG') {
          // Too large to analyse within any budget: skipped, as a file over the budget is.
          stats.skipped++;
          const why = `File skipped: it is ${readErrorReason(error)}, too large to analyse, so nothing is reported for it. Leave the file out with ignores.`;
          finish(index, { result: fileResult(file, [fileMessage(why, 1, false, 'skipped')]) });
        } else finish(index, { result: fileResult(file, [fileMessage(`Could not read the file: ${readErrorReason(error)}`, 2, true)]) });
        continue;
      }
      if (step < read.length) stats.bytes += raw.length;
      // UTF-16 files (BOM first) are matched and analysed as the text they hold.
      const bytes = asUtf8(raw);
      // The triggers are ASCII, so they are looked for in the bytes themselves (an ASCII match
      // there is one in the UTF-8 text too), in one linear pass.
      // A bundle or generated file is known by its bytes before any parse, the same on every run.
      const shape = language === 'typescript' && !options.includeGenerated ? leftOutByShape(bytes, named.has(file)) : undefined;
      if (shape && shape !== 'quiet') {
        stats.skipped++;
        cache?.drop(file);
        finish(index, { result: fileResult(file, [shape]) });
        continue;
      }
      const passed = !!language && !shape && prefilter(bytes, language);
      if (language && !shape) chance.saw(file, passed);
      let reached: string[] | undefined;
      if (!language || !passed) {
        // No trigger: no rule can report on this file and it lends no facts, unless SQL it imports does (held
        // back, decided after the rest). A bundle or generated client (vendored.ts) is not the project's code.
        if (language && !shape && step < read.length && chance.hold(file, bytes, language)) {
          later.push(index);
          continue;
        }
        if (!language || !second?.analyse) {
          cache?.skip(file, stat, second?.dependencies);
          finish(index, { result: fileResult(file) });
          continue;
        }
        reached = second.dependencies;
      }
      // The key: the file's bytes, and the project files its front end reads (a psycopg pin).
      const hash = cache ? `${contentHash(raw)}+${context!.of(file, language)}` : undefined;
      // Over its language's cap: skipped by its size, before any parse, and cached so (the caps key the cache).
      const oversize = overSizeCap(bytes.length, language, caps);
      if (oversize) {
        stats.skipped++;
        if (hash) cache!.set(file, hash, { messages: [oversize] }, stat);
        finish(index, { result: fileResult(file, [oversize]) });
        continue;
      }
      stats.parsed++;
      // Without a BOM: ESLint drops it too, and the front ends would take it for text (a Python syntax error).
      const text = decodeText(bytes);
      const cached = hash ? cache?.get(file, hash, stat) : undefined;
      if (cached && withinLimits(cached, analyzer.options)) {
        stats.cached++;
        if (isSkip(cached)) stats.skipped++;
        finish(index, outcomeOf(file, text, cached));
        continue;
      }
      pending.push(
        analyzer.analyze(file, text).then((outcome) => {
          if (outcome.kind === 'done') {
            if (hash) cache?.set(file, hash, withDependencies(outcome.analysis, reached), stat);
            // Over the bound of counted steps (src/work.ts): a skip, as a cached one is.
            if (isSkip(outcome.analysis)) stats.skipped++;
            finish(index, outcomeOf(file, text, outcome.analysis));
            return;
          }
          const message = stoppedMessage(outcome, analyzer.options);
          // A skip is kept with the limits it was decided under: the next run gives the same report, at once,
          // until the file changes or a run allows it more time or memory.
          if (hash && outcome.kind !== 'failed') cache?.set(file, hash, { messages: [message], limits: { timeBudget: analyzer.options.timeBudget, memoryLimit: analyzer.options.memoryLimit } }, stat);
          else cache?.drop(file);
          if (outcome.kind !== 'failed') stats.skipped++;
          finish(index, { result: fileResult(file, [message]) });
        }),
      );
    }
    // Analysis on this thread while reading is analysis, not reading.
    stats.timings.read = performance.now() - discoveredAt - analyzer.inProcessMs;
    analyzer.flush();
    await Promise.all(pending);
  } finally {
    stats.threads = analyzer.threads;
    endScan();
    await analyzer.destroy();
  }
  const analysedAt = performance.now();
  stats.timings.analyse = analysedAt - discoveredAt - stats.timings.read;

  const results: FileResult[] = [];
  const projectFacts = new Map<string, ProjectFacts>();
  const directives = new Map<string, FileDirectives>();
  for (const [index, file] of read.entries()) {
    const outcome = outcomes[index];
    if (reported.has(file)) results.push(outcome.result);
    if (outcome.facts) projectFacts.set(file, outcome.facts);
    if (outcome.directives) directives.set(file, outcome.directives);
  }
  const unitOf = (file: string) => units.unitOf(file);
  // With --cache, a project pass over the very facts of the last one is not run again.
  const passKey = cache ? projectPassKey(cache, projectFacts, reported, unitOf) : undefined;
  const remembered = passKey ? cache!.projectFindings(passKey) : undefined;
  if (remembered) addProjectFindings(results, remembered);
  else {
    // The rules' code is loaded here, and by the analysis of a file: a scan served from the cache loads neither.
    const { rules } = await import('../../rules/index.ts');
    const added = runProjectRules(activeRules(options.rules, rules), projectFacts, results, unitOf);
    if (passKey) cache!.rememberProject(passKey, added);
  }
  const unused = { off: 0, warn: 1, error: 2 }[options.reportUnusedSuppressions ?? 'warn'] as 0 | 1 | 2;
  for (const result of results) {
    applySuppressions(result, directives.get(result.filePath), active, { unused });
    // The text is kept for code frames only where there is something to show.
    if (result.messages.length === 0) delete result.source;
  }
  const projectAt = performance.now();
  stats.timings.project = projectAt - analysedAt;
  if (cache) {
    const unsaved = cache.save();
    stats.cache = cache.discarded ? { file: cache.file, discarded: cache.discarded } : { file: cache.file };
    if (unsaved) stats.cache.unsaved = unsaved;
  }
  stats.timings.cache = performance.now() - projectAt;
  stats.timings.total = performance.now() - started;
  return {
    results,
    errorCount: results.reduce((n, r) => n + r.errorCount, 0),
    warningCount: results.reduce((n, r) => n + r.warningCount, 0),
    stats,
    ...(options.keepFacts ? { facts: projectFacts } : {}),
  };
}

/**
 * What a project pass decides over, as one text, stored whole and compared as text (hashing it needed
 * node:crypto, which a scan served from the cache otherwise never loads): each file that lends facts,
 * by what fixes its facts (its content key, and the files its analysis read; the config is in the
 * cache's own key), whether it is reported, and its unit; and the folder messages name other files
 * from. Undefined when a file's facts are not fixed by its entry (it has none this scan).
 */
function projectPassKey(cache: AnalysisCache, facts: ReadonlyMap<string, ProjectFacts>, reported: ReadonlySet<string>, unitOf: UnitOf): string | undefined {
  const lines = [process.cwd()];
  const dependencies = new Map<string, number>();
  for (const file of facts.keys()) {
    const key = cache.analysisKey(file, dependencies);
    if (key === undefined) return undefined;
    const unit = unitOf(file);
    lines.push(`${file}\t${key}\t${reported.has(file) ? 1 : 0}\t${unit.root}\t${unit.defaultSchema ?? ''}`);
  }
  // The files' dependencies, which their keys name by number: their paths, hashes and stats.
  lines.push('', ...dependencies.keys());
  return lines.join('\n');
}

function fileResult(filePath: string, messages: Finding[] = [], source?: string): FileResult {
  const result: FileResult = { filePath, messages, errorCount: 0, warningCount: 0 };
  // Most files of a scan have no messages: nothing to count.
  if (messages.length > 0) countSeverities(result);
  if (source !== undefined) result.source = source;
  return result;
}

function outcomeOf(file: string, text: string | undefined, analysis: FileAnalysis): FileOutcome {
  // Cached analyses are shared objects: copy the messages the later passes add to and sort.
  const outcome: FileOutcome = { result: fileResult(file, [...analysis.messages], text) };
  if (analysis.facts) outcome.facts = analysis.facts;
  if (analysis.directives) outcome.directives = analysis.directives;
  return outcome;
}
