// Resets a `finally` block runs on a checked-out connection before it goes
// back to its pool: `try { SET x ...; work } finally { RESET x; release() }`.
// A session setting written inside the try is undone on every path out of it
// (a throw, a return, the normal end), before the release hands the connection
// to the next job. Only the finally block's own top-level statements count (no
// branch may skip them), only before the first release of that connection,
// and only SQL the block spells out as a constant. A call in the block that
// hands the connection to a function or method of the same file
// (`finally { await giveBack(client) }`) counts for what that function's own
// top-level statements reset on its parameter, before it releases it.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { analyzeSql } from '../../../sql/index.ts';
import { methodOf, stringValue, unwrap, type Node } from '../syntax.ts';

/** What the finally block undoes: setting names (lower-cased), '*' for RESET ALL / DISCARD ALL, `call:<routine>` for a routine it calls. */
export function finallyResets(tries: readonly TSESTree.TryStatement[], receiver: string, program: TSESTree.Program): string[] {
  const out: string[] = [];
  for (const t of tries) if (t.finalizer) out.push(...resetsIn(t.finalizer.body, receiver, program, 2));
  return out;
}

/** What `body`'s own top-level statements reset on `receiver` before releasing it; `depth` bounds the helpers followed. */
function resetsIn(body: readonly TSESTree.Statement[], receiver: string, program: TSESTree.Program, depth: number): string[] {
  const out: string[] = [];
  for (const statement of body) {
      const call = callOf(statement);
      // A tagged template on the connection itself (postgres.js reserve(): conn`RESET x`).
      if (call?.type === 'TaggedTemplateExpression') {
        if (call.tag.type === 'Identifier' && call.tag.name === receiver && call.quasi.expressions.length === 0) out.push(...resetsOf(call.quasi.quasis[0].value.cooked ?? ''));
        continue;
      }
      if (!call) continue;
      const method = methodOf(call);
      const object = method ? unwrap(method.object) : undefined;
      const handed = call.arguments.findIndex((a) => unwrap(a as Node)?.type === 'Identifier' && (unwrap(a as Node) as TSESTree.Identifier).name === receiver);
      if (handed >= 0 && depth > 0) {
        const callee = unwrap(call.callee);
        const name = callee?.type === 'Identifier' ? callee.name : method?.name;
        const fn = name ? functionNamed(program, name) : undefined;
        const param = fn?.params[handed];
        if (fn?.body?.type === 'BlockStatement' && param?.type === 'Identifier') out.push(...resetsIn(fn.body.body, param.name, program, depth - 1));
        // Code the connection is handed to may release it: nothing after it counts.
        break;
      }
      if (!method || object?.type !== 'Identifier' || object.name !== receiver) continue;
      if (method.name === 'release' || method.name === 'end' || method.name === 'destroy') break;
      const arg = unwrap(call.arguments[0] as Node | undefined);
      const text = arg ? stringValue(arg) : undefined;
      if (text === undefined) continue;
      out.push(...resetsOf(text));
  }
  return out;
}

/** A function declaration or class method of the file by its name (the first one). */
function functionNamed(program: TSESTree.Program, name: string): TSESTree.FunctionLike | undefined {
  for (const top of program.body) {
    const node = top.type === 'ExportNamedDeclaration' && top.declaration ? top.declaration : top;
    if (node.type === 'FunctionDeclaration' && node.id?.name === name) return node;
    if (node.type === 'ClassDeclaration') {
      for (const member of node.body.body) {
        if (member.type === 'MethodDefinition' && member.key.type === 'Identifier' && member.key.name === name) return member.value;
      }
    }
  }
  return undefined;
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
    // A routine the block calls (`SELECT app.leave_tenant()`): what it clears is for the rules to join from the .sql files.
    for (const call of s.calls ?? []) out.push(`call:${call.name}`);
    for (const w of s.settingWrites) {
      if (w.via === 'reset_all') out.push('*');
      else if (w.name === undefined || w.level !== 'session') continue;
      else if (w.via === 'reset') out.push(w.name);
      else if (w.value?.kind === 'default' || (w.value?.kind === 'literal' && (w.value.value === null || w.value.value === ''))) out.push(w.name);
    }
  }
  return out;
}
