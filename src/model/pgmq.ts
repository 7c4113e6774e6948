// pgmq (the Postgres message-queue extension, github.com/pgmq/pgmq; Supabase
// Queues is pgmq with `pgmq_public` wrappers): its API is functions, not
// statements on the queue's table, so the queue facts of a call are read here.
// What the functions do, read from pgmq's own SQL (pgmq--1.x.sql):
//
// - `pgmq.read(queue_name, vt, qty[, conditional])` (and `read_with_poll`,
//   the `read_grouped*` family) picks visible messages (`vt <= clock_timestamp()`)
//   `FOR UPDATE SKIP LOCKED`, sets `vt = clock_timestamp() + vt seconds` and
//   `read_ct = read_ct + 1`, and returns them: a claim that counts, whose lease
//   is `vt`, and that takes back every message whose lease passed. It has no
//   limit: a consumer that wants one compares `read_ct` itself;
//   A read with `vt => 0` leaves the messages visible: a peek, no claim;
// - `pgmq.pop(queue_name)` deletes what it reads: nothing is handed out again;
// - `pgmq.delete(queue_name, msg_id)` and `pgmq.archive(queue_name, msg_id)`
//   (also with an array of ids) end a message by its id; archive moves it to
//   `pgmq.a_<queue>`, the queue's dead-letter and history table;
// - `pgmq.set_vt(queue_name, msg_id, vt)` moves a message's `vt` to vt seconds
//   from now: from the running consumer, a heartbeat (0 hands it back at once);
// - `pgmq.send`/`send_batch` enqueue.
//
// Supabase's `pgmq_public.read(queue_name, sleep_seconds, n)` passes
// `sleep_seconds` as pgmq's `vt`; its `pop`, `archive`, `delete` and `send`
// are pgmq's. A call whose queue is a parameter of the routine it is in (such
// a wrapper's own body) is a pass-through: its callers are the consumers.
import type { SettingValue, StatementFacts } from '../sql/index.ts';
import { bindOf } from './queue-binds.ts';
import { ATTEMPT_COLUMN } from './queue-columns.ts';
import type { FileModel, Span, SqlSite } from './types.ts';

/** The schemas whose functions are pgmq's API: the extension's, and Supabase's wrappers of it. */
const SCHEMAS = new Set(['pgmq', 'pgmq_public']);
/** Functions that hand messages out for a visibility timeout: (queue_name, vt, qty, ...). */
const READS = /^read(?:_with_poll|_grouped\w*)?$/;
/** The columns of a queue table the functions read and write (pgmq.message_record). */
export const PGMQ_COUNTER = 'read_ct';
export const PGMQ_LEASE = 'vt';
/**
 * The prefilter's trigger: a call of pgmq's API, and a comparison of the read count a consumer may make in a file that
 * calls none (the clients' `readCount`/`read_count` too), which the project pass needs to see. Supabase's schema alone:
 * `supabase.schema('pgmq_public').rpc('read', ...)` names the function apart from it.
 */
export const PGMQ_TRIGGER = /pgmq(?:_public|\s*\.\s*"?(?:read|pop|archive|delete|set_vt))|read_?c(?:oun)?t/i;

/** A pgmq queue's table: `pgmq.q_<queue>`; `q_*` where the queue's name is decided at run time. */
export function pgmqTable(queue: string | undefined): { table: string; schema: string } {
  return { table: `q_${queue === undefined ? '*' : queue.toLowerCase()}`, schema: 'pgmq' };
}

/**
 * A statement's claim of a pgmq queue table (`pgmq.q_<queue>`, or `pgmq.%I` that a copy of pgmq.read formats): pgmq's
 * read written out, inlined or vendored. Its limit is its consumers', as the API's is.
 */
export function pgmqQueueOf(name: { table: string; schema?: string }, model: FileModel, statement: StatementFacts): { api: 'pgmq'; queue?: string; consumerUnseen?: true } | undefined {
  if (name.schema?.toLowerCase() !== 'pgmq') return undefined;
  // `q_{queue_name}`, `{qtable}`: a name the code computes (src/sql/dynamic.ts writes it so), the queue unknown.
  const table = /^q_(.+)$/i.exec(name.table)?.[1];
  if (table === undefined && !/^\{.*\}$/.test(name.table)) return undefined;
  return { api: 'pgmq', queue: table !== undefined && /^\w+$/.test(table) ? table : undefined, consumerUnseen: consumerOutside(model, statement) || undefined };
}

/** A statement at the top level of a .sql file (not in a function or procedure): the program that runs it consumes what it reads. */
function consumerOutside(model: FileModel, statement: StatementFacts): boolean {
  return model.language === 'sql' && statement.routine?.kind !== 'function' && statement.routine?.kind !== 'procedure';
}

type Call = NonNullable<StatementFacts['calls']>[number];

interface PgmqCall {
  op: 'read' | 'pop' | 'delete' | 'archive' | 'set_vt' | 'send';
  /** The queue's name, where the call gives it (a literal, or a string the host binds). */
  queue?: string;
  /** The visibility timeout in seconds (read, set_vt), where the call gives it. */
  vtSeconds?: number;
  /** The timeout is a value of the code's. */
  vtFromCode: boolean;
  span: Span;
}

/** The pgmq call a routine call is, or undefined: not pgmq's, or a wrapper's pass-through of its own parameters. */
function pgmqCallOf(call: Call, statement: StatementFacts, site: SqlSite): PgmqCall | undefined {
  const dot = call.name.lastIndexOf('.');
  const schema = call.name.slice(0, dot).replace(/"/g, '');
  const fn = call.name.slice(dot + 1).replace(/"/g, '');
  if (!SCHEMAS.has(schema)) return undefined;
  const op = READS.test(fn) ? 'read' : fn === 'pop' || fn === 'delete' || fn === 'archive' || fn === 'set_vt' ? fn : /^send(?:_batch)?$/.test(fn) ? 'send' : undefined;
  if (!op) return undefined;
  const arg = (position: number, ...names: string[]) => call.args.find((a) => a.name !== undefined && names.includes(a.name))?.value ?? call.args.filter((a) => a.name === undefined)[position]?.value;
  const queueArg = arg(0, 'queue_name');
  if (queueArg?.kind === 'routine-parameter') return undefined;
  const bind = bindOf(site, statement);
  const bound = (v: SettingValue | undefined) => (v?.kind === 'literal' ? v.value : v?.kind === 'placeholder' && bind ? bind(v.index) : undefined);
  const queue = bound(queueArg);
  const vtArg = op === 'read' ? arg(1, 'vt', 'sleep_seconds') : op === 'set_vt' ? arg(2, 'vt') : undefined;
  const vt = bound(vtArg);
  return {
    op,
    queue: typeof queue === 'string' ? queue : undefined,
    vtSeconds: typeof vt === 'number' ? vt : typeof vt === 'string' && /^\d+$/.test(vt) ? Number(vt) : undefined,
    vtFromCode: vtArg !== undefined && vtArg.kind !== 'literal',
    span: call.span,
  };
}

export interface PgmqFacts<R> {
  claims: PgmqClaim<R>[];
  finishes: PgmqFinish<R>[];
  heartbeats: PgmqHeartbeat<R>[];
  /**
   * Where the file compares a message's read count (`msg.read_ct > 5`, `if m.read_ct >= max_reads then`): a consumer's
   * limit. Also where it counts attempts in a table of its own (`update jobs set attempt_count = attempt_count + 1` for
   * the job a message names): its limit is that table's, and may be anywhere.
   */
  countChecks: R[];
}

interface Placed<R> {
  table: string;
  schema: string;
  at: R;
  api: 'pgmq';
  /** The queue's name, for messages; undefined where the code decides it. */
  queue?: string;
}

export interface PgmqClaim<R> extends Placed<R> {
  design: 'lease';
  setAt: R;
  leaseColumn: string;
  leaseAt: R;
  leaseSeconds?: number;
  leaseFromCode?: boolean;
  /** Every read takes back the messages whose visibility timeout passed. */
  reclaimAt: R;
  increments: true;
  counter: string;
  writes: string[];
  takes: string[];
}

export interface PgmqFinish<R> extends Placed<R> {
  kind: 'finish';
  whereAt: R;
  compared: string[];
  by: string;
  setsDead: boolean;
  sets: string[];
  increments: false;
}

export interface PgmqHeartbeat<R> extends Placed<R> {
  column: string;
  whereAt: R;
  compared: string[];
  by: string;
}

/** A comparison of a read count in any of the languages: `read_ct > 5`, `5 <= msg.readCount`, `m.read_ct >= max_reads`. */
// Not an arrow or a JSON path (`(m) => m.read_ct`, `message->>'read_ct'`): those read the count, they compare nothing.
const COUNT_CHECK = /\bread_?c(?:oun)?t\b['"\]]?\s*(?:[<>]=?|[=!]==?)|(?<![-=>])(?:[<>]=?|[=!]==?)\s*[\w.$[\]'"]*\bread_?c(?:oun)?t\b/gi;

/** The pgmq facts of one file. */
export function pgmqFactsOf<R>(model: FileModel, ref: (span: Span) => R): PgmqFacts<R> {
  const facts: PgmqFacts<R> = { claims: [], finishes: [], heartbeats: [], countChecks: [] };
  if (!PGMQ_TRIGGER.test(model.text)) return facts;
  for (const m of model.text.matchAll(COUNT_CHECK)) facts.countChecks.push(ref({ start: m.index, end: m.index + m[0].length }));
  for (const site of model.sites) {
    for (const statement of site.analysis.statements) {
      for (const write of statement.rowWrites) {
        const counts = write.assignments.some((a) => a.value.kind === 'increment' && a.column !== PGMQ_COUNTER && ATTEMPT_COLUMN.test(a.column));
        if (counts && write.schema !== 'pgmq') facts.countChecks.push(ref(write.span));
      }
      for (const call of statement.calls ?? []) {
        const pgmq = pgmqCallOf(call, statement, site);
        if (!pgmq) continue;
        const at = ref(pgmq.span);
        const placed = { ...pgmqTable(pgmq.queue), at, api: 'pgmq' as const, queue: pgmq.queue };
        // A read with no timeout (vt 0) hides nothing: a peek that leaves the messages to whoever reads next. A read
        // written at the top level of a .sql file is a statement some program runs (a sqlc or named query, a psql
        // script, a pgTAP test): its consumer, and the read count it may compare, are that program's.
        const consumerUnseen = consumerOutside(model, statement);
        if (pgmq.op === 'read' && pgmq.vtSeconds !== 0 && !consumerUnseen) {
          facts.claims.push({
            ...placed,
            design: 'lease',
            setAt: at,
            leaseColumn: PGMQ_LEASE,
            leaseAt: at,
            leaseSeconds: pgmq.vtSeconds,
            leaseFromCode: (pgmq.vtSeconds === undefined && pgmq.vtFromCode) || undefined,
            reclaimAt: at,
            increments: true,
            counter: PGMQ_COUNTER,
            writes: [PGMQ_LEASE, PGMQ_COUNTER],
            takes: [],
          });
        } else if (pgmq.op === 'delete' || pgmq.op === 'archive') {
          facts.finishes.push({ ...placed, kind: 'finish', whereAt: at, compared: ['msg_id'], by: 'id', setsDead: false, sets: [], increments: false });
        } else if (pgmq.op === 'set_vt' && pgmq.vtSeconds !== 0) {
          facts.heartbeats.push({ ...placed, column: PGMQ_LEASE, whereAt: at, compared: ['msg_id'], by: 'id' });
        }
      }
    }
  }
  return facts;
}
