// Resets a `finally` block runs on a checked-out connection before it goes
// back to its pool: `try { SET x ...; work } finally { RESET x; release() }`.
// A session setting written inside the try is undone on every path out of it
// (a throw, a return, the normal end), before the release hands the connection
// to the next job. Only the finally block's own top-level statements count (no
// branch may skip them), only before the first release of that connection,
// and only SQL the block spells out as a constant.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { analyzeSql } from '../../../sql/index.ts';
import { methodOf, stringValue, unwrap, type Node } from '../syntax.ts';

/** What the finally block undoes: setting names (lower-cased), or '*' for RESET ALL / DISCARD ALL. */
export function finallyResets(tries: readonly TSESTree.TryStatement[], receiver: string): string[] {
  const out: string[] = [];
  for (const t of tries) {
    if (!t.finalizer) continue;
    for (const statement of t.finalizer.body) {
      const call = callOf(statement);
      // A tagged template on the connection itself (postgres.js reserve(): conn`RESET x`).
      if (call?.type === 'TaggedTemplateExpression') {
        if (call.tag.type === 'Identifier' && call.tag.name === receiver && call.quasi.expressions.length === 0) out.push(...resetsOf(call.quasi.quasis[0].value.cooked ?? ''));
        continue;
      }
      if (!call) continue;
      const method = methodOf(call);
      const object = method ? unwrap(method.object) : undefined;
      if (!method || object?.type !== 'Identifier' || object.name !== receiver) continue;
      if (method.name === 'release' || method.name === 'end' || method.name === 'destroy') break;
      const arg = unwrap(call.arguments[0] as Node | undefined);
      const text = arg ? stringValue(arg) : undefined;
      if (text === undefined) continue;
      out.push(...resetsOf(text));
    }
  }
  return out;
}

function callOf(statement: TSESTree.Statement): TSESTree.CallExpression | TSESTree.TaggedTemplateExpression | undefined {
  if (statement.type !== 'ExpressionStatement') return undefined;
  const e = unwrap(statement.expression as Node);
  const inner = e?.type === 'AwaitExpression' ? unwrap(e.argument as Node) : e;
  return inner?.type === 'CallExpression' || inner?.type === 'TaggedTemplateExpression' ? inner : undefined;
}

function resetsOf(text: string): string[] {
  const out: string[] = [];
  for (const s of analyzeSql(text).statements) {
    if (s.discard === 'all') out.push('*');
    for (const w of s.settingWrites) {
      if (w.via === 'reset_all') out.push('*');
      else if (w.name === undefined || w.level !== 'session') continue;
      else if (w.via === 'reset') out.push(w.name);
      else if (w.value?.kind === 'default' || (w.value?.kind === 'literal' && (w.value.value === null || w.value.value === ''))) out.push(w.name);
    }
  }
  return out;
}
