// Output formats by name; one file per reporter.
import type { FileResult } from '../engine/findings.ts';
import { formatJson } from './json.ts';
import { formatStylish } from './stylish.ts';

export interface ReportContext {
  cwd: string;
  color: boolean;
  codeFrames: boolean;
}

export const formats: Record<string, (results: readonly FileResult[], context: ReportContext) => string> = {
  stylish: (results, context) => formatStylish(results, context),
  json: (results) => formatJson(results),
};

export const FORMAT_NAMES = Object.keys(formats);
