// Dynamic SQL in PL/pgSQL: the text an EXECUTE builds with format(...), ||,
// concat(), quote_ident() and quote_literal(), read as a template. Literal
// parts are SQL as written; what fills %I and quote_ident() is a name, what
// fills %L and quote_literal() a value, and a bare variable (%s, || v) either.
// Every character of the template maps back to the expression's text.
import type { Node } from './extract.ts';
import { byteToUtf16Map } from './offsets.ts';
import { parseStatements } from './parser.ts';
import type { Hole } from './placeholders.ts';
import { constValue } from './values.ts';

export interface DynamicTemplate {
  sql: string;
  holes: Hole[];
  /** origin[i]: the offset in the expression's text that character i of `sql` comes from (one more entry for the end). */
  origin: number[];
  /** The source text of what fills each identifier hole, to tell a name from a hole apart later. */
  holeNames: string[];
}

/** Expressions nested deeper than this, or templates longer, are not read. */
const MAX_DEPTH = 32;
const MAX_LENGTH = 64 * 1024;

/**
 * Reads `expression` (the text after EXECUTE) as a template, or undefined when
 * it does not build a string we can read. `variables` gives the expressions
 * earlier assigned to a variable (`q := format(...); EXECUTE q`).
 */
export function dynamicTemplate(expression: string, variables?: ReadonlyMap<string, string>): DynamicTemplate | undefined {
  const prefix = 'SELECT ';
  const parsed = parseStatements(prefix + expression);
  if (!parsed.ok || parsed.statements.length !== 1) return undefined;
  const target = parsed.statements[0].stmt.SelectStmt?.targetList;
  if (!target || target.length !== 1 || parsed.statements[0].stmt.SelectStmt.fromClause) return undefined;
  const toUtf16 = byteToUtf16Map(prefix + expression);
  const offsetOf = (location: number | undefined) => Math.max(0, toUtf16(location ?? 0) - prefix.length);
  const root = target[0].ResTarget?.val as Node | undefined;

  // A bare variable assigned earlier: read what was assigned (its offsets are not in this text, so they map to the variable).
  const variable = columnName(root);
  if (variable && variables?.has(variable)) {
    const assigned = dynamicTemplate(variables.get(variable)!);
    if (!assigned) return undefined;
    return { ...assigned, origin: assigned.origin.map(() => offsetOf(root?.ColumnRef?.location)) };
  }

  const out: DynamicTemplate = { sql: '', holes: [], origin: [], holeNames: [] };
  const pushText = (text: string, origins: number[] | number) => {
    for (let i = 0; i < text.length; i++) out.origin.push(typeof origins === 'number' ? origins : origins[Math.min(i, origins.length - 1)] ?? 0);
    out.sql += text;
  };
  const sourceOf = (node: Node | undefined, wholeArgument: boolean): string => {
    const start = offsetOf(locationOf(node));
    return expression.slice(start, endOf(expression, start, !wholeArgument)).trim();
  };
  /** A hole for what `node` fills in at run time; `wholeArgument` for a format() or quote_*() argument (its text runs to the next `,` or `)`). */
  // How a name filled at run time reads in messages: literal parts as written, the rest in braces ('q_' || queue_name -> q_{queue_name}).
  const displayName = (node: Node | undefined, wholeArgument: boolean, depth = 0): string => {
    const literal = constValue(node);
    if (literal !== undefined && node?.A_Const) return String(literal);
    if (node?.TypeCast) return displayName(node.TypeCast.arg, wholeArgument, depth + 1);
    const expr = node?.A_Expr;
    if (depth < 8 && expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '||') return displayName(expr.lexpr, false, depth + 1) + displayName(expr.rexpr, false, depth + 1);
    return `{${(sourceOf(node, wholeArgument) || 'dynamic').replace(/\s+/g, ' ')}}`;
  };
  const pushHole = (node: Node | undefined, as: 'identifier' | 'value' | 'either', wholeArgument = false) => {
    const at = offsetOf(locationOf(node));
    const identifierText = `"${displayName(node, wholeArgument).replace(/"/g, '""').slice(0, 60)}"`;
    // The hole is one character long in the template; the analyzer renders it.
    const start = out.sql.length;
    pushText('?', at);
    const hole: Hole = { start, end: start + 1, identifierText };
    if (as === 'identifier') hole.identifier = true;
    out.holes.push(hole);
    out.holeNames.push(identifierText.slice(1, -1).replace(/""/g, '"'));
  };
  const pushConstant = (node: Node, as: 'identifier' | 'value' | 'text') => {
    const value = constValue(node);
    const text = value === null ? 'NULL' : String(value);
    const origins = literalOrigins(expression, offsetOf(locationOf(node)), text.length);
    if (as === 'text') pushText(text, origins);
    else if (as === 'identifier') pushText(/^[a-z_][a-z0-9_$]*$/.test(text) ? text : `"${text.replace(/"/g, '""')}"`, origins[0] ?? 0);
    else pushText(value === null ? 'NULL' : `'${text.replace(/'/g, "''")}'`, origins[0] ?? 0);
  };

  const build = (node: Node | undefined, depth: number): boolean => {
    if (!node || depth > MAX_DEPTH || out.sql.length > MAX_LENGTH) return false;
    if (constValue(node) !== undefined && node.A_Const) {
      pushConstant(node, 'text');
      return true;
    }
    if (node.TypeCast) return build(node.TypeCast.arg, depth + 1);
    const expr = node.A_Expr;
    if (expr?.kind === 'AEXPR_OP' && expr.name?.[0]?.String?.sval === '||') return build(expr.lexpr, depth + 1) && build(expr.rexpr, depth + 1);
    const call = node.FuncCall;
    if (call) {
      const parts = (call.funcname ?? []) as Node[];
      const fn = String(parts[parts.length - 1]?.String?.sval ?? '').toLowerCase();
      const args = (call.args ?? []) as Node[];
      if (fn === 'format' && args[0] && constValue(args[0]) !== undefined) return format(args[0], args.slice(1), depth);
      if (fn === 'concat') return args.every((a) => build(a, depth + 1));
      if (fn === 'quote_ident' && args.length === 1) {
        if (constValue(args[0]) !== undefined) pushConstant(args[0], 'identifier');
        else pushHole(args[0], 'identifier', true);
        return true;
      }
      if ((fn === 'quote_literal' || fn === 'quote_nullable') && args.length === 1) {
        if (constValue(args[0]) !== undefined) pushConstant(args[0], 'value');
        else pushHole(args[0], 'value', true);
        return true;
      }
    }
    // A variable, a parameter or any other expression fills the text at run time.
    pushHole(node, 'either');
    return true;
  };

  // format('... %I ... %L ... %s ... %%', a, b, c), with %n$ positions.
  const format = (formatNode: Node, args: Node[], depth: number): boolean => {
    const text = String(constValue(formatNode) ?? '');
    const origins = literalOrigins(expression, offsetOf(locationOf(formatNode)), text.length);
    let next = 0;
    let i = 0;
    while (i < text.length) {
      const percent = text.indexOf('%', i);
      if (percent < 0) {
        pushText(text.slice(i), origins.slice(i));
        break;
      }
      pushText(text.slice(i, percent), origins.slice(i, percent));
      const spec = /^%(?:(\d+)\$)?-?(?:\d+|\*(?:\d+\$)?)?([sIL%])/.exec(text.slice(percent));
      if (!spec) return false;
      i = percent + spec[0].length;
      if (spec[2] === '%') {
        pushText('%', origins[percent] ?? 0);
        continue;
      }
      const index = spec[1] ? Number(spec[1]) - 1 : next;
      next = index + 1;
      const arg = args[index];
      if (!arg) return false;
      if (constValue(arg) !== undefined) pushConstant(arg, spec[2] === 'I' ? 'identifier' : spec[2] === 'L' ? 'value' : 'text');
      else if (spec[2] === 's' && depth < MAX_DEPTH && isStringBuilder(arg)) {
        if (!build(arg, depth + 1)) return false;
      } else pushHole(arg, spec[2] === 'I' ? 'identifier' : spec[2] === 'L' ? 'value' : 'either', true);
    }
    return true;
  };

  if (!build(root, 0) || out.sql.trim().length === 0) return undefined;
  // A template that is only a hole (EXECUTE v with v unknown) says nothing.
  if (out.holes.length === 1 && out.sql.trim() === '?') return undefined;
  // One past the end maps one past the last character, so a statement's end lands after it.
  out.origin.push((out.origin[out.origin.length - 1] ?? -1) + 1);
  return out;
}

function isStringBuilder(node: Node): boolean {
  const parts = (node.FuncCall?.funcname ?? []) as Node[];
  const fn = String(parts[parts.length - 1]?.String?.sval ?? '').toLowerCase();
  return fn === 'format' || fn === 'concat' || (node.A_Expr?.kind === 'AEXPR_OP' && node.A_Expr.name?.[0]?.String?.sval === '||');
}

function columnName(node: Node | undefined): string | undefined {
  const fields = node?.ColumnRef?.fields as Node[] | undefined;
  if (!fields || fields.length !== 1) return undefined;
  const name = fields[0].String?.sval;
  return name ? String(name).toLowerCase() : undefined;
}

function locationOf(node: Node | undefined): number | undefined {
  if (!node) return undefined;
  const inner = node[Object.keys(node)[0]];
  if (typeof inner?.location === 'number' && inner.location >= 0) {
    // A cast's location is its `::`; the expression starts at its argument.
    if (node.TypeCast) return locationOf(inner.arg) ?? inner.location;
    if (node.A_Expr) return locationOf(inner.lexpr) ?? inner.location;
    return inner.location;
  }
  return undefined;
}

/** Where the expression that starts at `start` ends: at the first top-level `,` or `)` (or `||`, when `atConcat`). */
function endOf(text: string, start: number, atConcat: boolean): number {
  let depth = 0;
  let quote: string | undefined;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = text[i + 1] === quote ? (i++, quote) : undefined;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') {
      if (depth === 0) return i;
      depth--;
    } else if (depth === 0 && (c === ',' || (atConcat && c === '|' && text[i + 1] === '|'))) return i;
  }
  return text.length;
}

/**
 * The offset in `text` of each character of the string literal that starts at
 * `start` ('...' with '' doubled, E'...' and $tag$...$tag$): `length` values.
 */
function literalOrigins(text: string, start: number, length: number): number[] {
  const origins: number[] = [];
  let i = start;
  if (text[i] === 'E' || text[i] === 'e') i++;
  if (text[i] === '$') {
    const close = text.indexOf('$', i + 1);
    let j = close + 1;
    while (origins.length < length) origins.push(j++);
    return origins;
  }
  if (text[i] !== "'") {
    while (origins.length < length) origins.push(start);
    return origins;
  }
  i++;
  while (origins.length < length && i < text.length) {
    origins.push(i);
    if (text[i] === "'" && text[i + 1] === "'") i += 2;
    else if (text[i] === '\\' && (text[start] === 'E' || text[start] === 'e')) i += 2;
    else i++;
  }
  while (origins.length < length) origins.push(i);
  return origins;
}
