// The column and state vocabulary of the queue model. Names are the fallback:
// a column's role in the claim decides first (src/model/queue.ts). The
// column the claim increments is the attempt counter whatever it is called
// (`read_ct`, `delivery_count`); a column the claim sets to `now() + interval`
// and takes back once it has passed is a lease end (`available_at`, `vt`);
// a fence is a column the claim writes (see fenceOf).

/**
 * A vocabulary of column names, matched by their words: a camelCase column
 * (`leasedUntil`) is `leased_until`, and so is its folded form `leaseduntil`
 * (the statement facts fold names to lower case), unless the vocabulary needs
 * its underscores to stay precise (`folded` false).
 */
export interface ColumnNames {
  test(column: string): boolean;
}

const snakeCase = (column: string) => column.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
/** Answers kept per vocabulary: the queue model asks about the same few columns many times per statement. */
const MAX_KNOWN_COLUMNS = 4096;
function byWords(names: RegExp, folded = true): ColumnNames {
  const withoutUnderscores = folded ? new RegExp(names.source.replace(/_/g, ''), names.flags) : undefined;
  const known = new Map<string, boolean>();
  return {
    test(column) {
      let answer = known.get(column);
      if (answer === undefined) {
        answer = names.test(snakeCase(column)) || (withoutUnderscores !== undefined && !column.includes('_') && withoutUnderscores.test(column.toLowerCase()));
        if (known.size >= MAX_KNOWN_COLUMNS) known.clear();
        known.set(column, answer);
      }
      return answer;
    },
  };
}

/** Attempt counters: River `attempt`, graphile-worker `attempts`, pg-boss `retry_count`, Que `error_count`, pgmq `read_ct`. */
export const ATTEMPT_COLUMN =
  byWords(/^(attempts?|attempt_count|attempts_count|num_attempts|retry_count|retries|tries|try_count|run_count|error_count|failure_count|failures|read_ct|read_count|delivery_count|deliveries|receive_count)$/);
/** Counters that count down to the limit: `retries_remaining = retries_remaining - 1`, `retries_remaining > 0` in the claim. */
export const COUNTDOWN_COLUMN = byWords(/^(retries_remaining|remaining_retries|attempts_remaining|remaining_attempts|tries_remaining|remaining_tries|retries_left|attempts_left|tries_left)$/);
/** Their limits: `max_attempts`, pg-boss `retry_limit`. */
export const LIMIT_COLUMN = byWords(/^(max_(attempts?|retries|tries|runs|errors|failures|deliveries|reads)|retry_limit|attempt_limit|attempts_limit)$/);
/** A lease that ends at this time: `locked_until < now()` is an expired lease. */
export const LEASE_END_COLUMN = byWords(/^(locked_until|lock_until|lock_expires_at|lock_expiry|lease_until|leased_until|lease_expires_at|lease_expiry|lease_deadline|visible_at|invisible_until|vt|claimed_until|reserved_until)$/);
/** A lease that started at this time: `locked_at < now() - interval '4 hours'` is an expired lease. */
export const LEASE_START_COLUMN = byWords(/^(locked_at|lock_at|claimed_at|reserved_at|leased_at|picked_at|fetched_at|heartbeat_at|heartbeat_on|last_heartbeat_at|last_heartbeat|started_at|started_on|attempted_at|(running|processing|locked|claimed|leased|reserved|started|working|busy)_since)$/);
/** A worker's own heartbeat (a workers table's `last_seen`): jobs of a worker whose beat is stale are re-queued. */
export const WORKER_BEAT_COLUMN = byWords(/^(last_seen|last_seen_at|seen_at|last_beat|last_beat_at|last_ping|last_ping_at|pinged_at|alive_at|last_alive_at|last_active_at|last_checkin|last_checkin_at|checked_in_at|heartbeat|heartbeated_at)$/);
/** When a job may first run: compared with now() to take due jobs, never a lease. */
export const SCHEDULE_COLUMN = byWords(/^(run_at|run_after|scheduled_at|scheduled_for|scheduled_time|not_before|available_at|execute_at|perform_at|process_at|process_after|due_at|start_after|visible_after|created_at|inserted_at|enqueued_at)$/);
/** A time stamp by its name (`updated_at`, `touched_on`): a stale age when a claim of running jobs compares it with a cutoff. */
export const TIMESTAMP_COLUMN = byWords(/(^|_)(at|on|time|ts|timestamp)$|^(updated|modified|touched)/, false);
/**
 * The time of a recurring row's last or next turn (`last_alerted_at`, `next_report_at`, `next_nag_date`): a cadence, not a lease, when
 * the claim writes no state and nothing ever finishes the row (src/model/queue.ts). Not a beat, a lock or an attempt.
 */
export const CADENCE_COLUMN = byWords(
  /^(last|next)_(?![a-z_]*(heartbeat|beat|seen|ping|alive|active|check_?in|lock|lease|claim|reserv|attempt|retr|tri|try|pick|fetch|start|visib|run_?after))[a-z_]+_(at|on|time|date)$/,
);
export const STATUS_COLUMN = byWords(/^(status|state|job_state|job_status)$/);
export const ID_COLUMN = byWords(/^(id|job_id|jid|uuid|message_id|msg_id|task_id)$/);

/**
 * The row's own id: an id column by its name, or one named after the table's
 * last word in the singular (`delivery_id` of `alert_deliveries`, `run_id` of
 * `runs`), as tables keyed by `<noun>_id` name it, or after the whole table
 * name (`job_queue_id` of `job_queue`, `outbox_event_id` of `outbox_events`).
 */
export function isRowId(column: string, table: string): boolean {
  if (ID_COLUMN.test(column)) return true;
  const c = snakeCase(column);
  if (!c.endsWith('_id')) return false;
  const words = snakeCase(table.slice(table.lastIndexOf('.') + 1)).split('_');
  const last = words.pop() ?? '';
  const singular = last.endsWith('ies') ? `${last.slice(0, -3)}y` : /(ss|x|ch|sh)es$/.test(last) ? last.slice(0, -2) : last.endsWith('s') ? last.slice(0, -1) : last;
  return singular.length > 1 && (c === `${singular}_id` || (words.length > 0 && c === `${[...words, singular].join('_')}_id`));
}

export const RUNNING_STATUS = /^(running|active|executing|doing|locked|in_progress|inprogress|processing|started|claimed|reserved|working|busy|taken|leased|picked)$/i;
export const DEAD_STATUS = /^(dead|failed|failure|discarded|error|errored|exhausted|abandoned|cancelled|canceled|poisoned|dead_letter|dead_lettered|dlq|given_up|killed)$/i;
/** States a job waits in to be claimed. */
export const WAITING_STATUS = /^(queued|pending|available|ready|new|waiting|scheduled|retry|retryable)$/i;
/** A cancel: the end an operator (or the queue) gives a job, meant for whichever run holds it. */
export const CANCEL_STATUS = /^(cancell?ed|aborted|revoked)$/i;
export const DONE_STATUS = /^(done|completed|complete|succeeded|success|successful|finished|ok|processed)$/i;

export const isLeaseColumn = (c: string) => LEASE_END_COLUMN.test(c) || LEASE_START_COLUMN.test(c);
export const NOW_FUNCTIONS = ['now', 'clock_timestamp', 'statement_timestamp', 'transaction_timestamp', 'timezone', 'current_timestamp', 'localtimestamp'];
