// Output formats by name; one file per reporter.
import type { FileResult } from '../engine/findings.ts';
import { formatGithub } from './github.ts';
import { formatJson } from './json.ts';
import { formatSarif } from './sarif.ts';
import { formatStylish } from './stylish.ts';

export interface ReportContext {
  cwd: string;
  /** The repository root (git work tree, else cwd): SARIF and GitHub paths are relative to it. */
  root: string;
  color: boolean;
  codeFrames: boolean;
}

export const formats: Record<string, (results: readonly FileResult[], context: ReportContext) => string> = {
  stylish: (results, context) => formatStylish(results, context),
  json: (results) => formatJson(results),
  sarif: (results, context) => formatSarif(results, context),
  github: (results, context) => formatGithub(results, context),
};

export const FORMAT_NAMES = Object.keys(formats);

/** Formats written for machines: nothing else may go to their stream. */
export const MACHINE_FORMATS: readonly string[] = ['json', 'sarif', 'github'];
