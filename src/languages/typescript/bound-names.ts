// The names a file's text may bind to an initializer: each name written before `=`, `:` (a type
// annotation) or `/` (a comment), found in one pass over the text. A `const X = init` of the file
// is one of them, so a name outside them is bound by no const with an initializer, and a reader that
// only wants such a const (a chain's root held in `const db = wrap(trx)`, drivers/knex-builder.ts)
// can say so without the file's constant index, a walk of its whole tree (flow/file.ts) that most
// files otherwise build for that question alone. A false "may" costs the lookup, never a reading.
import type { TSESTree } from '@typescript-eslint/typescript-estree';

/** By program (a module is read at several depths): the names, or undefined when any name may be bound. */
const byProgram = new WeakMap<TSESTree.Program, ReadonlySet<string> | undefined>();

function boundNames(text: string): ReadonlySet<string> | undefined {
  // A name written with an escape (`\u0061`) is not the text's own letters.
  if (text.includes('\\u')) return undefined;
  const out = new Set<string>();
  for (const match of text.matchAll(/(?<![\w$])([A-Za-z_$][\w$]*)(?![\w$])\s*(?=[:=/])/g)) out.add(match[1]);
  return out;
}

/** False when the text binds `name` to no initializer anywhere (a name of ASCII letters only: others may always be). */
export function mayBeBound(program: TSESTree.Program, text: string, name: string): boolean {
  if (!byProgram.has(program)) byProgram.set(program, boundNames(text));
  const names = byProgram.get(program);
  return names === undefined || !/^[A-Za-z_$][\w$]*$/.test(name) || names.has(name);
}
