// The worker thread of the analysis pool (tinypool): loads the SQL parser and
// the front ends once, then analyses one file per task with the same
// scanFileText the in-process path runs.
import { loadSqlParser } from '../sql/index.ts';
import { scanFileText, type AnalysisConfig, type FileAnalysis } from './analyze-file.ts';

export type WorkerTask =
  | { kind: 'warmup' }
  /** `started`: 8 shared bytes where the worker writes when it took the task (Date.now()), for the time budget. */
  | { kind: 'analyze'; file: string; text: string; config: AnalysisConfig; started?: SharedArrayBuffer };

await loadSqlParser();

export default function runTask(task: WorkerTask): FileAnalysis | true {
  if (task.kind === 'warmup') return true;
  if (task.started) Atomics.store(new BigInt64Array(task.started), 0, BigInt(Date.now()));
  return scanFileText(task.file, task.text, task.config);
}
