// One SQL site from one Python expression: the text through strings.ts, the
// statement facts from src/sql with psycopg's placeholders, every span mapped
// back to the host file.
import type { SqlAnalysis } from '../../sql/index.ts';
import { analyzeHostText as analyzeSharedHostText } from '../host-text.ts';
import type { HostText } from './strings.ts';

/** Methods that send SQL given as their first argument (or `query=`). */
export const EXECUTE_METHODS = new Set(['execute', 'executemany', 'copy', 'stream', 'copy_expert']);
/** Methods that run a statement we cannot read (no SQL argument). */
export const OPAQUE_METHODS = new Set(['copy_from', 'copy_to', 'callproc']);
/** psycopg2.extras helpers: (cursor, sql, ...). */
export const EXTRAS_FUNCTIONS = new Set(['psycopg2.extras.execute_values', 'psycopg2.extras.execute_batch']);

export function analyzeHostText(host: HostText): SqlAnalysis {
  return analyzeSharedHostText(host, { placeholders: 'psycopg' });
}
