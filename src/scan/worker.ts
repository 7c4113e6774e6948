// The worker thread of the analysis pool (tinypool): loads the SQL parser and
// the front ends once, then analyses each task's batch of files with the same
// scanFileText the in-process path runs.
import { loadSqlParser } from '../sql/index.ts';
import type { AnalysisConfig, FileAnalysis } from './analysis.ts';
import { scanFileText } from './analyze-file.ts';
import { beginScan } from '../languages/typescript/flow/modules.ts';
import { LANGUAGES } from '../languages/extensions.ts';
import { loadFrontEnds } from '../languages/registry.ts';

export type WorkerTask =
  | { kind: 'warmup' }
  /**
   * `progress`: 16 shared bytes where the worker writes, as it takes each file, when (Date.now(),
   * at 0) and which (its index, at 1), for the per-file time budget (pool.ts).
   */
  | { kind: 'analyze'; files: readonly { file: string; text: string }[]; config: AnalysisConfig; progress?: SharedArrayBuffer };

// A worker takes files of any language: every front end, once.
await Promise.all([loadSqlParser(), loadFrontEnds(LANGUAGES.map((l) => l.language))]);
// A worker serves one scan (its pool ends with the scan): one scan scope for its life (flow/modules.ts).
beginScan();

export default function runTask(task: WorkerTask): FileAnalysis[] | true {
  if (task.kind === 'warmup') return true;
  const progress = task.progress ? new BigInt64Array(task.progress) : undefined;
  return task.files.map(({ file, text }, index) => {
    if (progress) {
      // The time is cleared while the index changes, so the pool never pairs one file's index with
      // another's start (it reads index, time, index).
      Atomics.store(progress, 0, 0n);
      Atomics.store(progress, 1, BigInt(index));
      Atomics.store(progress, 0, BigInt(Date.now()));
    }
    return scanFileText(file, text, task.config);
  });
}
