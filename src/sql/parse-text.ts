// Parsing a text that may hold placeholders: normalise them to $N, parse, and
// where the parser stops at a placeholder that stands for a name, retry with
// it as an identifier.
import { byteToUtf16Map, utf8Of } from './offsets.ts';
import { parseStatements, type ParseResult } from './parser.ts';
import { normalizePlaceholders, type Hole, type NormalizedSql, type PlaceholderStyle } from './placeholders.ts';

/** How many placeholders one statement may need to turn into identifiers before we give up. */
const MAX_IDENTIFIER_RETRIES = 16;

/** `remember`: whether the parse may be kept for the same text met again (parser.ts); a text read once is not. */
export function parseWithPlaceholders(text: string, style: PlaceholderStyle, holes: readonly Hole[], remember = true): { result: ParseResult; normalized: NormalizedSql } {
  const normalized = normalizePlaceholders(text, style, holes);
  let result = parseStatements(normalized.sql, remember);
  for (let retry = 0; !result.ok && retry < MAX_IDENTIFIER_RETRIES; retry++) {
    const cursor = normalized.toOriginal(byteToUtf16Map(normalized.sql)(result.cursorByte));
    if (!normalized.retryAsIdentifier(cursor)) break;
    result = parseStatements(normalized.sql, remember);
  }
  return { result, normalized };
}

/** Byte offset just past the word (identifier or keyword) that starts at a byte offset of `sql`. */
export function wordEndIn(sql: string): (byte: number) => number {
  let bytes: Buffer | undefined;
  return (byte) => {
    bytes ??= utf8Of(sql);
    let end = byte;
    while (end < bytes.length && /[\w$\x80-\xff]/.test(String.fromCharCode(bytes[end]))) end++;
    return end;
  };
}
