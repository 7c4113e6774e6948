// Why a file is skipped instead of analysed, and the message that says so.
//
// The report of a scan is a function of its input files and options: the
// default decision to skip a file is made by its size in bytes (per language,
// the parse work it stands for), before any parse, so it is the same on every
// machine and every run, and a cached skip is served by its stat. A small file
// whose analysis blows up is stopped by counted steps of work (src/work.ts,
// --max-analysis-steps), again the same on every run. The
// wall-clock time budget stays as a last resort only (60 s per file by default,
// --time-budget): which file it stops depends on the machine's load, so its
// message says so, and it should never fire on a file under the size cap.
//
// The caps (src/config/file-size.ts), from `scanFileText` on real files (2-core machine, CPU time, one
// file at a time; /tmp measurements in the commit that added this):
//   SQL, PL/pgSQL-heavy extension script (32 KB, x4, x16): 0.4, 0.5, 1.5 s at 500 KB (about 0.33 MB/s);
//   SQL, app migrations (47 KB .. 760 KB): 0.74 s at 760 KB (about 1 MB/s);
//   Python, generated API client (321 KB .. 5 MB): 2.6 s at 5 MB (about 2 MB/s);
//   TS, generated protobuf client (159 KB .. 2.5 MB): 2.8 s at 2.5 MB (about 0.9 MB/s);
//   TS, test suite (148 KB .. 2.4 MB): 2.2 s at 2.4 MB.
// So at the caps below a file costs at most some 6 s of CPU on the slowest
// shape measured, and a hand-written module is far smaller (the largest of the
// development corpus: 120 KB).
import type { Finding } from '../engine/findings.ts';
import type { Language } from '../model/index.ts';
import { fileMessage, type FileAnalysis } from './analysis.ts';
import { MB, type FileSizeCaps } from '../config/file-size.ts';

/** Default wall-clock budget per file, in ms: a last resort, far above what a file under the caps takes. */
export const DEFAULT_SCAN_TIME_BUDGET = 60_000;

function shown(bytes: number): string {
  return bytes >= MB ? `${+(bytes / MB).toFixed(1)} MB` : bytes >= 1024 ? `${+(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
}

/** The skip of a file over its language's cap, or undefined: decided by its size alone. */
export function overSizeCap(bytes: number, language: Language, caps: Readonly<FileSizeCaps>): Finding | undefined {
  const cap = caps[language];
  if (!(cap > 0) || bytes <= cap) return undefined;
  const option = `--max-file-size ${language}=${Math.ceil(bytes / 1024)}KB`;
  return fileMessage(
    `File skipped: it is ${shown(bytes)}, over the ${shown(cap)} cap for ${language === 'typescript' ? 'TS/JS' : language === 'sql' ? 'SQL' : 'Python'} files (decided by its size, the same on every run), so nothing is reported for it. Analyse it with ${option}, or leave it out with ignores.`,
    1,
    false,
    'skipped',
  );
}

/** The skip of a file whose analysis passed the bound of counted steps (work.ts): the same on every run. */
export function overStepBound(steps: number): Finding {
  return fileMessage(
    `File skipped: its analysis exceeded ${steps} steps (the --max-analysis-steps bound: steps of work counted, so the same on every run whatever the machine's load), so it was stopped and nothing is reported for it. Raise the bound with --max-analysis-steps (maxAnalysisSteps in the config), or leave the file out with ignores.`,
    1,
    false,
    'skipped',
  );
}

/** The analysis of a file that was skipped (its one message says so): counted in the stats when it comes from the cache. */
export function isSkip(analysis: FileAnalysis): boolean {
  return analysis.messages.length === 1 && analysis.messages[0].messageId === 'skipped' && !analysis.facts;
}

/** A cached skip holds only for a run that allows no more time and memory than the run that decided it. */
export function withinLimits(analysis: FileAnalysis, options: { timeBudget: number; memoryLimit: number }): boolean {
  const limits = analysis.limits;
  return !limits || (budgetOf(options.timeBudget) <= budgetOf(limits.timeBudget) && options.memoryLimit <= limits.memoryLimit);
}

/** 0 (and anything not positive) is no time budget at all. */
function budgetOf(ms: number): number {
  return ms > 0 ? ms : Infinity;
}

/** The message of an analysis that was stopped (time, memory) or failed. */
export function stoppedMessage(outcome: { kind: 'timeout' } | { kind: 'memory' } | { kind: 'failed'; message: string }, limits: { timeBudget: number; memoryLimit: number }): Finding {
  if (outcome.kind === 'timeout') {
    return fileMessage(
      `File skipped: analysing it took longer than ${limits.timeBudget} ms of wall-clock time (the per-file time budget, a last resort that depends on the machine's load: another run may analyse it), so it was stopped and nothing else is reported for it. Lower --max-file-size to skip files of its size on every run, raise the budget with --time-budget, or leave the file out with ignores.`,
      1,
      false,
      'skipped',
    );
  }
  if (outcome.kind === 'memory') {
    return fileMessage(
      `File skipped: analysing it needed more than ${limits.memoryLimit} MB of memory (the per-file limit), so it was stopped and nothing else is reported for it. Leave the file out with ignores.`,
      1,
      false,
      'skipped',
    );
  }
  return fileMessage(`pgq-audit failed on this file: ${outcome.message}`, 2, true);
}
