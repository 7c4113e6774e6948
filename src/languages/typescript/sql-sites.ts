// Which calls send SQL, per driver, and where their SQL text is:
// node-postgres/TypeORM/Slonik `x.query(...)`, postgres.js sql`...` and
// sql.unsafe(), Kysely sql`...`.execute(db), Knex raw, Drizzle db.execute(sql`...`),
// Slonik sql.unsafe`...`/sql.type(...)`...`, pg-promise none/one/many/...,
// Prisma $executeRaw/$queryRaw(Unsafe).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { Driver, Span } from '../../model/index.ts';
import type { PlaceholderStyle, SqlAnalysis } from '../../sql/index.ts';
import { analyzeHostText as analyzeSharedHostText, type HostText } from '../host-text.ts';

export const PG_PROMISE_METHODS = new Set(['none', 'one', 'many', 'any', 'oneOrNone', 'manyOrNone', 'result', 'multi', 'multiResult', 'query', 'each', 'map']);
export const SLONIK_METHODS = new Set(['query', 'one', 'many', 'any', 'maybeOne', 'oneFirst', 'manyFirst', 'anyFirst', 'maybeOneFirst', 'exists']);
export const PRISMA_TAG_METHODS = new Set(['$executeRaw', '$queryRaw']);
export const PRISMA_UNSAFE_METHODS = new Set(['$executeRawUnsafe', '$queryRawUnsafe']);

/** Tags whose template is SQL text that runs only when passed to a query call. */
export function isFragmentTag(tag: TSESTree.Node, tagDriver: Driver | undefined): boolean {
  // slonik sql.unsafe`...`, sql.type(z)`...`, sql.typeAlias('x')`...`; kysely/drizzle sql`...`; Prisma.sql`...`; sql-template-strings SQL`...`.
  if (tagDriver === 'kysely' || tagDriver === 'drizzle' || tagDriver === 'slonik' || tagDriver === 'prisma') return true;
  return false;
}

/**
 * pg-promise formats: `${name}`, `$(name)`, `$<name>`, `$[name]`, `$/name/`, with
 * `:raw`/`^`/`:name`/`~`/`:csv`/`:json` modifiers. `$1` stays a parameter.
 */
export function pgPromiseHoles(text: string): Span[] {
  const holes: Span[] = [];
  const pattern = /\$(?:\{\s*[\w.]+\s*\}|\(\s*[\w.]+\s*\)|<\s*[\w.]+\s*>|\[\s*[\w.]+\s*\]|\/\s*[\w.]+\s*\/|\d+(?=(?::\w+|\^|~|#)))(?::\w+|\^|~|#)?/g;
  for (const match of text.matchAll(pattern)) holes.push({ start: match.index!, end: match.index! + match[0].length });
  return holes;
}

/** Analyses host text as SQL (with extra holes, e.g. pg-promise's formats) and maps every span back to the host file. */
export function analyzeHostText(host: HostText, placeholders: PlaceholderStyle, extraHoles: readonly Span[] = []): SqlAnalysis {
  const holes = [...host.holes, ...extraHoles.filter((h) => !host.holes.some((k) => k.start < h.end && h.start < k.end))].sort((a, b) => a.start - b.start);
  return analyzeSharedHostText(host, { placeholders, holes });
}
