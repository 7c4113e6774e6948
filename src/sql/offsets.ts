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

/**
 * The UTF-8 byte length of each prefix of a text: `utf16ToByteMap(text)(i)` is `Buffer.byteLength(text.slice(0, i))`
 * (a surrogate pair cut in two counts its high half as the 3 bytes of a replacement character, as the slice
 * encodes it), built once instead of encoding a prefix per offset asked.
 */
export function utf16ToByteMap(text: string): (index: number) => number {
  const length = text.length;
  const byteAt = new Uint32Array(length + 1);
  let byte = 0;
  for (let i = 0; i < length; i++) {
    byteAt[i] = byte;
    const code = text.charCodeAt(i);
    if (code < 0x80) byte += 1;
    else if (code < 0x800) byte += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < length && isLowSurrogate(text.charCodeAt(i + 1))) {
      byteAt[i + 1] = byte + 3;
      byte += 4;
      i++;
    } else byte += 3;
  }
  byteAt[length] = byte;
  // As slice(0, index) reads its end: a negative one counts from the end, past the end is the end, NaN is 0.
  return (index) => byteAt[index < 0 ? Math.max(0, length + index) : Math.min(index, length) || 0];
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
