// The size caps of a scan (--max-file-size, the config's maxFileSize): bytes
// of a file above which it is skipped, per language, decided before any parse
// (src/scan/skips.ts says why these values and reports the skip).
import type { Language } from '../model/index.ts';

export type FileSizeCaps = Record<Language, number>;

export const MB = 1024 * 1024;

/** Bytes of a file above which it is skipped, by language (0: no cap). */
export const DEFAULT_MAX_FILE_SIZE: Readonly<FileSizeCaps> = { sql: 2 * MB, python: 4 * MB, typescript: 4 * MB };

const LANGUAGE_NAMES: Readonly<Record<string, Language>> = { sql: 'sql', python: 'python', py: 'python', typescript: 'typescript', ts: 'typescript', javascript: 'typescript', js: 'typescript' };

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb)?$/i;

function parseSize(text: string, option: string, error: (message: string) => Error): number {
  const match = SIZE.exec(text.trim());
  if (!match) throw error(`${option} ${text}: expected a size such as 512KB, 2MB or a number of bytes (0 for no cap)`);
  const unit = (match[2] ?? 'b').toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'mb' ? MB : unit === 'kb' ? 1024 : 1));
}

/**
 * --max-file-size: one size for every language (`4MB`), or sizes per language (`sql=1MB,ts=8MB`),
 * the others keeping their default. Throws `error(message)`, the message naming the option and the valid values
 * (the CLI's --max-file-size and the config's maxFileSize read the same text).
 */
export function parseMaxFileSize(value: string, option: string, error: (message: string) => Error): FileSizeCaps {
  const caps: FileSizeCaps = { ...DEFAULT_MAX_FILE_SIZE };
  if (!value.includes('=')) {
    const size = parseSize(value, option, error);
    for (const language of Object.keys(caps) as Language[]) caps[language] = size;
    return caps;
  }
  for (const part of value.split(',')) {
    const [name, size, extra] = part.split('=');
    const language = LANGUAGE_NAMES[name.trim().toLowerCase()];
    if (!language || size === undefined || extra !== undefined) {
      throw error(`${option} ${value}: expected <size> or <language>=<size>[,...] with a language of sql, python, typescript (ts, js, javascript)`);
    }
    caps[language] = parseSize(size, option, error);
  }
  return caps;
}
