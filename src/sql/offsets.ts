// libpg-query reports byte offsets into the UTF-8 encoding of its input; the
// host files and editors count UTF-16 code units.

const ASCII_ONLY = /^[\x00-\x7f]*$/;

export type OffsetMap = (byteOffset: number) => number;

export function byteToUtf16Map(text: string): OffsetMap {
  if (ASCII_ONLY.test(text)) return (byte) => byte;
  // utf16AtByte[b] is the UTF-16 index of the character containing byte b.
  const bytes = Buffer.byteLength(text, 'utf8');
  const utf16AtByte = new Uint32Array(bytes + 1);
  let byte = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    for (let k = 0; k < width; k++) utf16AtByte[byte + k] = i;
    byte += width;
    if (code >= 0x10000) i++; // surrogate pair
  }
  utf16AtByte[bytes] = text.length;
  return (b) => utf16AtByte[Math.max(0, Math.min(b, bytes))];
}

let lastText: string | undefined;
let lastBytes: Buffer | undefined;

/**
 * The UTF-8 encoding of a text, the last one kept: each statement and routine of a parsed chunk (up to 64 KB,
 * a hundred functions in an extension's script) reads the bytes of the same chunk.
 */
export function utf8Of(text: string): Buffer {
  if (text !== lastText || !lastBytes) {
    lastBytes = Buffer.from(text);
    lastText = text;
  }
  return lastBytes;
}
