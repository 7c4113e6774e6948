// SQL a module marks as SQL (#25): a string or template with a leading
// `/* sql */` comment, the mark editors highlight SQL by, kept in a constant
// or handed to a project helper (`sql(/* sql */ `UPDATE {{schema}}.jobs ...`,
// {...})`) and sent from another file the walk does not follow. Read as
// statements of unknown scope and connection, as returned-sql.ts reads the
// text a function returns: the queue rules judge what it says, no rule of
// transaction or session state reads it. A template engine's name
// (`{{schema}}`, `{{table_prefix}}jobs`) stands for itself, so every
// statement of the module names the same table the same way.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { SqlSite } from '../../../model/index.ts';
import type { Hole, SqlAnalysis } from '../../../sql/index.ts';
import { analyzeHostText } from '../../host-text.ts';
import { nameHoleTables } from '../hole-tables.ts';
import { holeExpressions } from '../params.ts';
import { resolveText, type HostText, type ResolveContext } from '../strings.ts';
import { children, type Node } from '../syntax.ts';
import { stateFree } from './returned-sql.ts';

interface MarkedSqlFile {
  readonly program: TSESTree.Program;
  readonly text: string;
  readonly resolveContext: ResolveContext;
  readonly model: { sites: SqlSite[] };
}

const ENGINE_NAME = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const WRITES_OR_LOCKS = /\b(update|delete|insert|for\s+(no\s+key\s+)?update|for\s+share)\b/i;

/** Where each `/* sql *\/` mark's literal starts: the first character after the comment that is not a blank. */
function markedStarts(program: TSESTree.Program, text: string): Set<number> {
  const out = new Set<number>();
  for (const c of program.comments ?? []) {
    if (c.type !== 'Block' || c.value.trim().toLowerCase() !== 'sql') continue;
    let at = c.range[1];
    while (at < text.length && /\s/.test(text[at])) at++;
    out.add(at);
  }
  return out;
}

/** The strings and templates that start where a mark points, descending only into nodes that hold a mark. */
function literalsAt(root: Node, starts: Set<number>, first: number, last: number, out: Node[] = []): Node[] {
  if (starts.has(root.range[0]) && (root.type === 'TemplateLiteral' || (root.type === 'Literal' && typeof root.value === 'string'))) out.push(root);
  for (const child of children(root)) if (child.range[0] <= last && child.range[1] >= first) literalsAt(child, starts, first, last, out);
  return out;
}

/** The template engine's names in the text, as holes that read as their own name. */
function engineNames(host: HostText): Hole[] {
  return [...host.text.matchAll(ENGINE_NAME)]
    .filter((m) => !host.holes.some((h) => h.start < m.index + m[0].length && m.index < h.end))
    .map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[1] }));
}

/** Sites of unknown scope for the marked SQL of the module that no site of the file read already. */
export function markedSqlSites(file: MarkedSqlFile): void {
  const starts = markedStarts(file.program, file.text);
  if (starts.size === 0) return;
  for (const literal of literalsAt(file.program as unknown as Node, starts, Math.min(...starts), Math.max(...starts))) {
    if (file.model.sites.some((s) => s.span.start <= literal.range[0] && literal.range[1] <= s.span.end)) continue;
    const host = resolveText(literal, { ...file.resolveContext, bindings: new Map(), caller: file.resolveContext });
    if (!host || host.pinned || !WRITES_OR_LOCKS.test(host.text)) continue;
    const holes = [...host.holes, ...engineNames(host)].sort((a, b) => a.start - b.start);
    const analysis: SqlAnalysis = analyzeHostText(host, { placeholders: 'dollar', holes });
    if (analysis.errors.length > 0) continue;
    analysis.statements = analysis.statements.filter(stateFree);
    if (analysis.statements.length === 0) continue;
    nameHoleTables(analysis, holeExpressions(host, literal, []), file.text, () => undefined);
    file.model.sites.push({ span: host.span, analysis, scope: { kind: 'unknown' }, connection: { kind: 'unknown' }, driver: 'unknown' });
  }
}
