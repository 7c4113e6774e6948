// One SQL site from one Python expression: the text through strings.ts, the
// statement facts from src/sql with psycopg's placeholders, every span mapped
// back to the host file.
import type { Span } from '../../model/index.ts';
import type { SqlAnalysis } from '../../sql/index.ts';
import { analyzeSql } from '../../sql/index.ts';
import { toHost, type HostText } from './strings.ts';

/** Methods that send SQL given as their first argument (or `query=`). */
export const EXECUTE_METHODS = new Set(['execute', 'executemany', 'copy', 'stream', 'copy_expert']);
/** Methods that run a statement we cannot read (no SQL argument). */
export const OPAQUE_METHODS = new Set(['copy_from', 'copy_to', 'callproc']);
/** psycopg2.extras helpers: (cursor, sql, ...). */
export const EXTRAS_FUNCTIONS = new Set(['psycopg2.extras.execute_values', 'psycopg2.extras.execute_batch']);

export function analyzeHostText(host: HostText): SqlAnalysis {
  const analysis = analyzeSql(host.text, { placeholders: 'psycopg', holes: host.holes });
  remapSpans(analysis, (s) => toHost(host, s));
  return analysis;
}

/** Rewrites every `{ start, end }` object under `value` in place, once each. */
export function remapSpans(value: unknown, map: (span: Span) => Span, seen = new Set<object>()): void {
  if (!value || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (const item of value) remapSpans(item, map, seen);
    return;
  }
  const record = value as Record<string, unknown>;
  if (typeof record.start === 'number' && typeof record.end === 'number' && Object.keys(record).length === 2) {
    const mapped = map({ start: record.start, end: record.end });
    record.start = mapped.start;
    record.end = mapped.end;
    return;
  }
  for (const key of Object.keys(record)) remapSpans(record[key], map, seen);
}
