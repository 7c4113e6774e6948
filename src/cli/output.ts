import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../scan/discover.ts';
import type { Io } from './io.ts';

/** Writes a report to --output-file (creating its folder) or to stdout. */
export function writeReport(text: string, outputFile: string | undefined, io: Io): void {
  if (outputFile === undefined) {
    if (text) io.stdout(text.endsWith('\n') ? text : `${text}\n`);
    return;
  }
  const path = resolve(io.cwd, outputFile);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text && !text.endsWith('\n') ? `${text}\n` : text);
  } catch (error) {
    throw new UsageError(`--output-file ${outputFile}: cannot write it: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
