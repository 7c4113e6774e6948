// The worker thread of the analysis pool (tinypool): loads the SQL parser and
// the front ends once, then analyses one file per task with the same
// scanFileText the in-process path runs.
import { loadSqlParser } from '../sql/index.ts';
import { scanFileText, type AnalysisConfig, type FileAnalysis } from './analyze-file.ts';

export type WorkerTask = { kind: 'warmup' } | { kind: 'analyze'; file: string; text: string; config: AnalysisConfig };

await loadSqlParser();

export default function runTask(task: WorkerTask): FileAnalysis | true {
  if (task.kind === 'warmup') return true;
  return scanFileText(task.file, task.text, task.config);
}
