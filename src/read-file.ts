// The one way pgq-audit reads a file it did not write: source files, the
// project files beside them (.gitignore, package.json, tsconfig.json,
// requirements.txt...), configs, baselines and the cache. A link to
// /dev/zero or a FIFO in a scanned tree must cost one message, never gigabytes
// or a scan that blocks forever.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** Project and config files larger than this are not read: no real one comes close. */
export const CONFIG_MAX_BYTES = 10 * 1024 * 1024;
/**
 * Source files larger than this are not read: a sparse file of 10 GB in a tree would otherwise
 * cost 10 GB, and the time budget stops the analysis of far smaller ones (a 20 MB bundle).
 */
export const SOURCE_MAX_BYTES = 64 * 1024 * 1024;

export class FileReadError extends Error {
  override name = 'FileReadError';
  constructor(
    message: string,
    /** ENOTFILE (a FIFO, a device, a folder) or EFBIG (over the limit); else the system's code. */
    readonly code: string,
  ) {
    super(message);
  }
}

// Opening a FIFO for reading blocks until a writer comes; with O_NONBLOCK it returns at once and
// fstat then says what it is. (Windows has no such flag, and no FIFOs in a folder tree.)
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The bytes of a regular file (a symbolic link is followed, but must lead to one). Throws a
 * FileReadError for anything else, or one over `maxBytes`; errors of the system (ENOENT, EACCES)
 * are thrown as they come.
 */
export function readRegularFile(path: string, maxBytes = Infinity): Buffer {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new FileReadError(`${path}: not a regular file (${kindOf(stats)})`, 'ENOTFILE');
    if (stats.size > maxBytes) throw new FileReadError(`${path}: larger than ${formatBytes(maxBytes)} (${formatBytes(stats.size)})`, 'EFBIG');
    // The size fstat gave: a file that grows meanwhile is read as it was, one that shrank as it is.
    const bytes = Buffer.allocUnsafe(stats.size);
    let length = 0;
    while (length < bytes.length) {
      const n = readSync(fd, bytes, length, bytes.length - length, length);
      if (n === 0) break;
      length += n;
    }
    return length === bytes.length ? bytes : bytes.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** A project or config file as UTF-8 text (a BOM dropped), within CONFIG_MAX_BYTES. */
export function readConfigText(path: string): string {
  return decodeText(readRegularFile(path, CONFIG_MAX_BYTES));
}

/** Why a file could not be read, in a few words: 'EACCES', 'not a regular file (a FIFO)'... */
export function readErrorReason(error: unknown): string {
  if (error instanceof FileReadError) return error.message.slice(error.message.indexOf(': ') + 2);
  return (error as NodeJS.ErrnoException)?.code ?? String((error as Error)?.message ?? error);
}

/**
 * Source text as ESLint reads it: UTF-8 without its byte order mark; UTF-16 with a byte order mark
 * (as some Windows editors save SQL) decoded too. Without a BOM, bytes are UTF-8.
 */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return Buffer.from(bytes.buffer, bytes.byteOffset + 3, bytes.length - 3).toString('utf8');
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}

/** The bytes as UTF-8: UTF-16 (with its BOM) re-encoded, anything else as it is. */
export function asUtf8(bytes: Buffer): Buffer {
  return (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) ? Buffer.from(decodeText(bytes), 'utf8') : bytes;
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${Math.round(n / 1024 / 1024)} MB` : `${n} bytes`;
}

/**
 * The `.sql` files of a folder with their text, each read only if it is a regular file of at most `maxBytes`
 * (a FIFO or device named *.sql beside a scanned file must not block the scan); a folder or file that cannot
 * be read is left out.
 */
export function* sqlFilesIn(dir: string, maxBytes: number): Generator<{ file: string; text: string }> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.toLowerCase().endsWith('.sql'));
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      text = decodeText(readRegularFile(file, maxBytes));
    } catch {
      continue;
    }
    yield { file, text };
  }
}
