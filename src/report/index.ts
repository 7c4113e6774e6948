// Output formats by name; one file per reporter, loaded when its format is asked for: a scan loads
// only the reporter it writes with.
import type { FileResult } from '../engine/findings.ts';

export interface ReportContext {
  cwd: string;
  /** The repository root (git work tree, else cwd): SARIF and GitHub paths are relative to it. */
  root: string;
  color: boolean;
  codeFrames: boolean;
}

export type Formatter = (results: readonly FileResult[], context: ReportContext) => string;

export const formats: Record<string, () => Promise<Formatter>> = {
  stylish: async () => (await import('./stylish.ts')).formatStylish,
  json: async () => {
    const { formatJson } = await import('./json.ts');
    return (results) => formatJson(results);
  },
  sarif: async () => (await import('./sarif.ts')).formatSarif,
  github: async () => (await import('./github.ts')).formatGithub,
};

export const FORMAT_NAMES = Object.keys(formats);

/** Formats written for machines: nothing else may go to their stream. */
export const MACHINE_FORMATS: readonly string[] = ['json', 'sarif', 'github'];
