// One SQL site from one Python expression: the text through strings.ts, the
// statement facts from src/sql, every span mapped back to the host file.
// The DB-API's method names are the defaults a driver module may replace.
import type { SqlAnalysis } from '../../../sql/index.ts';
import { analyzeHostText as analyzeSharedHostText } from '../../host-text.ts';
import type { HostText } from './strings.ts';

/** Methods of a DB-API cursor (and of psycopg's) that send SQL given as their first argument (or `query=`). */
export const DBAPI_EXECUTE_METHODS: ReadonlySet<string> = new Set(['execute', 'executemany', 'copy', 'stream', 'copy_expert']);
/** Methods that run a statement we cannot read (no SQL argument). */
export const OPAQUE_METHODS: ReadonlySet<string> = new Set(['copy_from', 'copy_to', 'callproc']);
/** DB-API methods that end a transaction or give a cursor. */
export const DBAPI_CONTROL_METHODS: readonly string[] = ['commit', 'rollback', 'cursor', 'close'];

/** The statement facts of host text whose placeholders are numbered $N already (params.ts numbers them). */
export function analyzeHostText(host: HostText): SqlAnalysis {
  return analyzeSharedHostText(host, { placeholders: 'dollar' });
}
