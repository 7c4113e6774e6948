// Calls of SQL functions that reach the outside world at once, whatever the
// transaction does next: pgsql-http's `http_post` sends the request during
// the statement (and the transaction waits for the answer holding its
// locks), dblink runs its statement on another connection that commits on
// its own, pg_sleep waits with the locks held, pgai's ai.openai_* functions
// ask the model's API during the statement. pg_net's `net.http_post` is
// not one of them: it inserts a row into net.http_request_queue, which its
// background worker only sees once the transaction has committed, so a
// rolled-back call sends nothing (an outbox).

import type { RoutineCall } from '../../sql/index.ts';

/** pgsql-http's functions (schema `http` or `extensions` on Supabase, or none). */
const HTTP = /^((http|extensions|public)\.)?(http|http_get|http_post|http_put|http_patch|http_delete|http_head)$/;
/** dblink's remote statements: each runs and commits on its own connection. */
const DBLINK = /^((dblink|extensions|public)\.)?(dblink|dblink_exec|dblink_send_query|dblink_open|dblink_fetch)$/;
const WAITS = /^(pg_catalog\.)?(pg_sleep|pg_sleep_for|pg_sleep_until)$/;
/** pgai's model calls (`ai.openai_embed`, `ai.anthropic_generate`): the request goes out during the statement. Tokenizing is local. */
const PGAI = /^ai\.(openai|anthropic|cohere|ollama|voyageai|litellm)_(?!(de)?tokenize$)\w+$/;

/** pg_sleep(0), pg_sleep(0.0), pg_sleep(null): returns at once (a zero wait only checks for a cancel); no wait, nothing sent. */
export function waitsNothing(call: RoutineCall): boolean {
  if (!/^(pg_catalog\.)?pg_sleep$/.test(call.name) || call.args.length !== 1 || call.args[0].name) return false;
  const value = call.args[0].value;
  return value.kind === 'literal' && (value.value === null || (typeof value.value === 'number' && value.value <= 0));
}

/** True when a call of the SQL function `name` (as written, lower-case, with its schema) reaches the outside world. */
export function sqlSideEffect(name: string): boolean {
  return HTTP.test(name) || DBLINK.test(name) || WAITS.test(name) || PGAI.test(name);
}
