// SQL fragments interpolated into a tagged query: Drizzle's, Kysely's and
// Slonik's `sql` make a fragment, not a query, and a fragment interpolated
// into another (`${filter}`) is SQL text there, not a value. Read where the
// file says what it is:
// - a fragment written at the hole, or a const of the file that holds one
//   (`const filter = sql`AND type = ${t}``): its text, spliced in;
// - an optional clause (`const filter = types ? sql`AND type = ANY(${types})`
//   : sql``;`): the code sends the statement with and without it, and the
//   one without it is read (the clause adds a filter; the rest of the
//   statement, its lease and its counter, is the same in both).
// Anything else stays a hole, as before.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { HostTextBuilder } from '../../host-text.ts';
import { constantInit, templateText, type HostText, type ResolveContext } from '../strings.ts';
import { span, unwrap, type Node } from '../syntax.ts';
import type { Value } from './types.ts';

const MAX_DEPTH = 4;

/** The interpolation reader of a tagged query's template: fragments spliced, other holes left as holes. */
export function fragmentReader(ctx: ResolveContext, value: (node: Node) => Value | undefined, depth = 0): (expression: Node) => HostText | undefined {
  const isFragment = (n: Node | undefined): n is TSESTree.TaggedTemplateExpression => n?.type === 'TaggedTemplateExpression' && value(n.tag)?.kind === 'tag';
  return (expression) => {
    if (depth >= MAX_DEPTH) return undefined;
    const at = unwrap(expression);
    const held = at?.type === 'Identifier' ? constantInit(at, ctx) : at;
    if (isFragment(held)) return templateText(held.quasi, ctx.source, fragmentReader(ctx, value, depth + 1));
    if (held?.type !== 'ConditionalExpression') return undefined;
    const [a, b] = [unwrap(held.consequent), unwrap(held.alternate)];
    if (!isFragment(a) || !isFragment(b)) return undefined;
    const empty = [a, b].find((t) => t.quasi.expressions.length === 0 && t.quasi.quasis.every((q) => (q.value.cooked ?? '').trim() === ''));
    return empty ? new HostTextBuilder().done(span(empty)) : undefined;
  };
}
