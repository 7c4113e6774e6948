// One file's analysis: front end, per-file rules, facts for the cross-file
// rules, suppression comments. The one code path for it: the scan runs it
// in-process for small scans and in worker threads (worker.ts) for large
// ones, and the cache stores its result.
import { rules } from '../../rules/index.ts';
import { collectProjectFacts } from '../engine/project-pass.ts';
import { activeRules, type ActiveRule } from '../engine/rule-config.ts';
import { runRules } from '../engine/run-rules.ts';
import { frontEndsMissing, loadedFrontEndFor, loadFrontEnds } from '../languages/registry.ts';
import { reloadSqlParser } from '../sql/index.ts';
import { readDirectives } from '../suppressions/index.ts';
import { languageOf } from '../languages/extensions.ts';
import type { FrontEnd } from '../languages/types.ts';
import { fileMessage, type AnalysisConfig, type FileAnalysis } from './analysis.ts';
import { runEachWithin } from './budget.ts';
import type { PoolFile, PoolOutcome } from './pool.ts';
import { overStepBound } from './skips.ts';
import { DEFAULT_MAX_ANALYSIS_STEPS, endWork, startWork, WorkLimitExceeded, workExceeded } from '../work.ts';

const activeByConfig = new WeakMap<AnalysisConfig, ActiveRule[]>();

function activeOf(config: AnalysisConfig): ActiveRule[] {
  let active = activeByConfig.get(config);
  if (!active) {
    active = activeRules(config.rules, rules);
    activeByConfig.set(config, active);
  }
  return active;
}

/** Analyses one file's text. Never throws: a bug of ours on one file is one fatal message for that file. */
export function scanFileText(file: string, text: string, config: AnalysisConfig): FileAnalysis {
  // The caller loads the front end first (languages/registry.ts, loadFrontEnds).
  const frontEnd = loadedFrontEndFor(file);
  if (!frontEnd) return languageOf(file) ? { messages: [fileMessage('pgq-audit failed on this file: its front end was not loaded.', 2, true)] } : { messages: [] };
  // The deterministic bound (work.ts): steps counted, the same on every run whatever the load.
  const bound = config.maxAnalysisSteps ?? DEFAULT_MAX_ANALYSIS_STEPS;
  startWork(bound);
  try {
    const analysis = analyseText(frontEnd, file, text, config);
    // A step past the bound that some code caught and went on from still ends the analysis.
    return workExceeded() ? { messages: [overStepBound(bound)] } : analysis;
  } catch (error) {
    if (error instanceof WorkLimitExceeded) return { messages: [overStepBound(bound)] };
    throw error;
  } finally {
    endWork();
  }
}

function analyseText(frontEnd: FrontEnd, file: string, text: string, config: AnalysisConfig): FileAnalysis {
  try {
    const active = activeOf(config);
    const model = frontEnd.parse(text, file, { queryFunctions: config.queryFunctions, sql: config.sql });
    const messages = runRules(model, active);
    const analysis: FileAnalysis = { messages };
    // A parser that ran out of stack reports it as the file's parse error: a deeper stack may do.
    if (model.fatal && /call stack/i.test(model.fatal.message)) analysis.stackOverflow = true;
    const facts = collectProjectFacts(model, active, messages);
    if (facts) analysis.facts = facts;
    const directives = readDirectives(model);
    if (directives) analysis.directives = directives;
    if (model.dependencies && model.dependencies.length > 0) analysis.dependencies = model.dependencies;
    return analysis;
  } catch (error) {
    if (error instanceof WorkLimitExceeded) throw error;
    if (error instanceof RangeError && /call stack/i.test(error.message)) {
      return {
        messages: [fileMessage('The file nests too deeply for the analysis (it ran out of stack), so nothing is reported for it. Leave the file out with ignores if it is generated.', 2, true)],
        stackOverflow: true,
      };
    }
    // A bug of ours on one file must not cost the user the rest of the scan.
    return { messages: [fileMessage(`pgq-audit failed on this file: ${(error as Error)?.stack ?? error}`, 2, true)] };
  }
}

/**
 * Analyses files on this thread, one after another, each within `timeBudget` ms (budget.ts): the
 * outcomes a worker would give, but for memory. `interrupted`: one was stopped mid-way.
 */
export function analyseWithin(
  timeBudget: number,
  files: readonly PoolFile[],
  config: AnalysisConfig,
  options: { stopAtInterrupt?: boolean } = {},
): { outcomes: PoolOutcome[]; interrupted: boolean } {
  const { results, interrupted } = runEachWithin(
    timeBudget,
    files.map(({ file, text }) => () => scanFileText(file, text, config)),
    options,
  );
  return { outcomes: results.map((result) => (result.done ? { kind: 'done', analysis: result.value } : { kind: 'timeout' })), interrupted };
}

/**
 * analyseWithin for a thread that has no worker to hand the rest to: a file stopped mid-way may have
 * been stopped inside the SQL parser, whose wasm state is then not to be trusted, so the files after it
 * run on a fresh parser (reloadSqlParser), each stop followed by one more reload.
 */
export async function analyseInProcess(timeBudget: number, files: readonly PoolFile[], config: AnalysisConfig): Promise<PoolOutcome[]> {
  await loadFrontEnds(frontEndsMissing(files.map((f) => f.file)));
  const outcomes: PoolOutcome[] = [];
  let rest = files;
  while (rest.length > 0) {
    const run = analyseWithin(timeBudget, rest, config, { stopAtInterrupt: true });
    outcomes.push(...run.outcomes);
    rest = rest.slice(run.outcomes.length);
    const { interrupted } = run;
    if (interrupted) await reloadSqlParser();
  }
  return outcomes;
}
