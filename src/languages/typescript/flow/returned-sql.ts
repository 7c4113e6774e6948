// SQL that is not at the call (#25): modules of functions that return the
// text of a statement (`export function claimNext(schema) { return `UPDATE
// ${schema}.jobs ...` }`), sent from other files the walk does not follow
// through the call. The text each such function returns is read as a site of
// unknown scope and connection, like a named query of a query file: the queue
// rules (claims, finishes, sweeps, leases) judge what it says, and no rule of
// transaction or session state reads it (they read only sites in a known
// transaction, a callback, or statements this reading drops). Only text that
// is clearly SQL: it parses, and a statement locks or writes rows.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { SqlSite } from '../../../model/index.ts';
import type { SqlAnalysis, StatementFacts } from '../../../sql/index.ts';
import { holeExpressions } from '../params.ts';
import { analyzeHostText } from '../sql-sites.ts';
import { resolveText, type ResolveContext } from '../strings.ts';
import { objectProperty, unwrap, type Node } from '../syntax.ts';
import { nameHoleTables } from '../hole-tables.ts';
import { productionReturn } from '../test-env.ts';

interface ReturnedSqlFile {
  readonly program: TSESTree.Program;
  readonly text: string;
  readonly resolveContext: ResolveContext;
  /** Functions whose text a site of the file read already (helperText at a call). */
  readonly readHelpers: WeakSet<Node>;
  readonly model: { sites: SqlSite[] };
  readonly drivers: { readonly queryConfig: { readonly text: readonly string[] } };
}

type FunctionLike = TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

/** The module's functions, by name: declarations and consts bound to a function, at the top level or exported. */
function moduleFunctions(program: TSESTree.Program): { name: string; fn: FunctionLike }[] {
  const out: { name: string; fn: FunctionLike }[] = [];
  for (const statement of program.body) {
    const s = statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration' ? statement.declaration : statement;
    if (!s) continue;
    if (s.type === 'FunctionDeclaration' && s.id) out.push({ name: s.id.name, fn: s });
    if (s.type === 'VariableDeclaration' && s.kind === 'const') {
      for (const d of s.declarations) {
        const init = unwrap(d.init as Node | null);
        if (d.id.type === 'Identifier' && (init?.type === 'ArrowFunctionExpression' || init?.type === 'FunctionExpression')) out.push({ name: d.id.name, fn: init });
      }
    }
  }
  return out;
}

/** What a function returns when that is its one value outside tests: an arrow's body, or the last statement of its block when it is its only return. */
function returned(fn: FunctionLike): Node | undefined {
  if (fn.body.type !== 'BlockStatement') return unwrap(fn.body as Node);
  return productionReturn(fn.body.body);
}

/** The SQL text node of a returned value: a string or template (or `+` of them), or the text of a query config `{ text, values }`. */
function textNode(value: Node, textKeys: readonly string[]): Node | undefined {
  if (value.type === 'TemplateLiteral' || (value.type === 'Literal' && typeof value.value === 'string') || (value.type === 'BinaryExpression' && value.operator === '+')) return value;
  if (value.type === 'ObjectExpression') {
    for (const key of textKeys) {
      const p = objectProperty(value, key);
      const v = p ? unwrap(p.value as Node) : undefined;
      if (v && v.type !== 'ObjectExpression') return textNode(v, []);
    }
  }
  return undefined;
}

/** A statement whose facts hold whatever transaction or session runs it: a claim, a finish, a sweep, a lease write. */
export function stateFree(s: StatementFacts): boolean {
  if (s.lockingReads.length === 0 && s.rowWrites.length === 0) return false;
  return s.settingWrites.length === 0 && !s.transaction && !s.discard && !s.deallocateAll && !s.roleSettings?.length && !s.routine && !s.defines;
}

/** Sites of unknown scope for the SQL the module's functions return, where no site of the file read it already. */
export function returnedSqlSites(file: ReturnedSqlFile): void {
  for (const { name, fn } of moduleFunctions(file.program)) {
    if (file.readHelpers.has(fn)) continue;
    const value = returned(fn);
    const text = value ? textNode(value, file.drivers.queryConfig.text) : undefined;
    if (!text) continue;
    // Its parameters are holes: what a caller gives is not known here.
    const bindings = new Map<string, Node | undefined>();
    for (const p of fn.params) {
      const id = p.type === 'AssignmentPattern' ? p.left : p;
      if (id.type === 'Identifier') bindings.set(id.name, undefined);
    }
    const host = resolveText(text, { ...file.resolveContext, bindings, caller: file.resolveContext });
    if (!host || host.pinned || !/\b(update|delete|insert|for\s+(no\s+key\s+)?update|for\s+share)\b/i.test(host.text)) continue;
    const analysis: SqlAnalysis = analyzeHostText(host, 'dollar');
    if (analysis.errors.length > 0) continue;
    analysis.statements = analysis.statements.filter(stateFree);
    if (analysis.statements.length === 0) continue;
    nameHoleTables(analysis, holeExpressions(host, text, []), file.text, () => undefined);
    file.model.sites.push({ span: host.span, analysis, scope: { kind: 'unknown' }, connection: { kind: 'unknown' }, driver: 'unknown', functionName: name });
  }
}
