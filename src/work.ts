// The deterministic bound of one file's analysis: units of work counted in the
// loops that can blow up on a small file (a statement or expression the TS
// flow engine walks, inlined function bodies included; a statement the Python
// flow walks; a node read while following project calls; a SQL statement or
// PL/pgSQL body parsed). A file whose analysis passes the bound is skipped
// with a message that says so: the count depends on the file and the config
// only, never on the machine's load, so the same input gives the same report
// on every run. The wall-clock budget (scan/budget.ts) stays the last resort.
//
// One analysis runs at a time per thread (analysis is synchronous), so the
// counter is the thread's: scanFileText starts it, the hot loops call work(),
// and outside an analysis there is no bound.
//
// The default bound is some 100 times the most any real file took: 9,702 steps
// (the 127 files the development corpus analyses), 7,392 (the 335 files of five
// queue libraries' repositories, a module's walk), 150 (the 2,556 files of the
// bench shapes). A step costs some microseconds, so the bound stops a runaway
// analysis in seconds, well before the 60 s wall-clock budget.

/** Steps of one file's analysis above which it is skipped (--max-analysis-steps; 0: no bound). */
export const DEFAULT_MAX_ANALYSIS_STEPS = 1_000_000;

/** Thrown by work() once the bound is passed; the analysis of the file ends there. */
export class WorkLimitExceeded extends Error {
  constructor(readonly limit: number) {
    super(`analysis exceeded ${limit} steps`);
    this.name = 'WorkLimitExceeded';
  }
}

let limit = Infinity;
let used = 0;

/** Starts counting one file's analysis, bounded by `max` steps (0 or less: no bound). */
export function startWork(max: number): void {
  limit = max > 0 ? max : Infinity;
  used = 0;
}

/** Ends the bound of the analysis that startWork began; returns the steps it took. */
export function endWork(): number {
  limit = Infinity;
  const steps = used;
  used = 0;
  return steps;
}

/** Counts `units` steps of work; throws WorkLimitExceeded once the analysis passed its bound. */
export function work(units = 1): void {
  used += units;
  if (used > limit) throw new WorkLimitExceeded(limit);
}

/**
 * Runs `task` on a count of its own under the same bound, the running count untouched, and throws
 * WorkLimitExceeded when the task passed the bound (even if it caught the throw itself). For work
 * done once per process and shared by every file that needs it (an imported module walked for what
 * it exports): counted apart, it costs each of those files the same, whichever asked first.
 */
export function isolatedWork<T>(task: () => T): T {
  const outer = used;
  used = 0;
  try {
    const value = task();
    if (used > limit) throw new WorkLimitExceeded(limit);
    return value;
  } finally {
    used = outer;
  }
}

/** Whether the running analysis passed its bound (a caller may have caught the throw and gone on). */
export function workExceeded(): boolean {
  return used > limit;
}
