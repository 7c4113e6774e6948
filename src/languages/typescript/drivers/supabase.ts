// Supabase (`@supabase/supabase-js`, `@supabase/ssr`): the client is a pool
// behind PostgREST; `supabase.rpc('fn', { a: x })` runs `SELECT fn(a => $1)`
// in a transaction of its own on a connection of that pool. The site is the
// call, so the routine's own facts (in the project's SQL) can be linked to it.
// `supabase.schema('s').rpc('fn', ...)` calls `s.fn` (Supabase Queues' consumers
// call `pgmq_public.read`, `pgmq_public.delete` so) on the same pool.
import { HostTextBuilder, type HostText } from '../../host-text.ts';
import type { QueryCall, Value } from '../flow/types.ts';
import { span, stringValue, unwrap, type Call, type Node } from '../syntax.ts';
import type { DriverModel } from './model.ts';

/** SQL text written for a call, every character mapped to `at` (the call it stands for). */
function synthesizedText(sql: string, at: { start: number; end: number }): HostText {
  const out = new HostTextBuilder();
  out.push(sql, at.start, at.end);
  return out.done({ ...at });
}

/** The schema of `client.schema('s').rpc(...)`: the call the rpc is made on, where it is written there. */
function schemaOf(call: Call): string | undefined {
  const callee = unwrap(call.callee as Node);
  const receiver = callee?.type === 'MemberExpression' ? unwrap(callee.object as Node) : undefined;
  if (receiver?.type !== 'CallExpression') return undefined;
  const method = unwrap(receiver.callee as Node);
  if (method?.type !== 'MemberExpression' || method.computed || method.property.type !== 'Identifier' || method.property.name !== 'schema') return undefined;
  const schema = stringValue(receiver.arguments[0] as Node);
  return schema && /^[A-Za-z_][\w$]*$/.test(schema) ? schema : undefined;
}

function rpcCall(call: Call, on: Value | undefined): QueryCall | undefined {
  const written = stringValue(call.arguments[0] as Node);
  if (!written || !/^[A-Za-z_][\w$]*(\.[A-Za-z_][\w$]*)?$/.test(written)) return undefined;
  const schema = written.includes('.') ? undefined : schemaOf(call);
  const name = schema ? `${schema}.${written}` : written;
  const args = unwrap(call.arguments[1] as Node | undefined);
  const named: { key: string; value: Node }[] = [];
  if (args?.type === 'ObjectExpression') {
    for (const p of args.properties) {
      if (p.type !== 'Property' || p.computed) return undefined;
      const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
      if (!key || !/^[A-Za-z_]\w*$/.test(key)) return undefined;
      named.push({ key, value: p.value as Node });
    }
  } else if (args) {
    return undefined;
  }
  const at = call.arguments[0] as Node;
  const sql = `SELECT ${name}(${named.map((a, i) => `${a.key} => $${i + 1}`).join(', ')})`;
  return { text: at, synthesized: synthesizedText(sql, span(call)), on, driver: 'supabase', placeholders: 'dollar', at: call, values: { kind: 'args', nodes: named.map((a) => a.value) } };
}

export const supabase: DriverModel = {
  driver: 'supabase',
  modules: { names: ['@supabase/supabase-js', '@supabase/ssr'] },
  exports: Object.fromEntries(['createClient', 'createServerClient', 'createBrowserClient'].map((name) => [name, { kind: 'maker', driver: 'supabase', makes: 'pool' } as const])),
  types: { SupabaseClient: 'pool' },
  // client.schema('s') is the same client, its rpc calls in schema s.
  method: (on, method) => (on.kind === 'pool' && on.driver === 'supabase' && method === 'schema' ? on : undefined),
  queries: [{ methods: new Set(['rpc']), read: ({ arg0, on, onDriver, call }) => (arg0 && onDriver === 'supabase' ? rpcCall(call, on) : undefined) }],
};
