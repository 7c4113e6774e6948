// The text a result's findings point into, for code frames and fingerprints.
// The scan keeps the text of files it read; one served from the cache is read
// here, by the reports that need it, so a scan whose report needs none (JSON)
// does not read it at all.
import type { FileResult } from '../engine/findings.ts';
import { decodeText, readRegularFile } from '../read-file.ts';

/** Undefined when the file cannot be read (gone since the scan), and for a database object without its text. */
export function sourceOf(result: FileResult): string | undefined {
  if (result.source !== undefined || result.object) return result.source;
  try {
    return decodeText(readRegularFile(result.filePath));
  } catch {
    return undefined;
  }
}
