// Python string literals as SQL text with a map back to the host file:
// prefixes, escapes, implicit concatenation, f-string replacements (holes,
// or the text of a constant), `+` concatenation, `%` and `.format()`
// (psycopg's placeholders look the same), psycopg.sql composition
// (SQL, Identifier, Literal, Placeholder, Composed `+`, `.join`, `.format`),
// SQLAlchemy's text() and names of constants.
import { HostTextBuilder, toHost } from '../../host-text.ts';
import type { HostText } from './python-text.ts';
import { forEachCodeChar } from '../../../sql/lexer.ts';
import { dictItemText } from './sql-dicts.ts';
import { callParts, children, dottedName, keyword, methodCall, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';

export type { HostText };

export { toHost };

/** Appends source[from, to) as it is written, each unit mapped to its own offset: a run of plain characters in one piece. */
export function pushSourceRun(out: HostTextBuilder, source: string, from: number, to: number): void {
  out.text += source.slice(from, to);
  for (let k = from; k < to; k++) {
    out.starts.push(k);
    out.ends.push(k + 1);
  }
}

class Builder extends HostTextBuilder {
  build(node: Node, composed: boolean): HostText {
    return { ...this.done(span(node)), composed };
  }
}

/** Decodes one String or FormatString node into the builder; false when it is not a literal we read. */
function decodeLiteral(node: Node, text: string, out: Builder, replacement?: (expr: Node) => HostText | undefined, nameOf?: (expr: Node) => string | undefined): boolean {
  const raw = text.slice(node.from, node.to);
  const head = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(raw);
  if (!head) return false;
  const prefix = head[1].toLowerCase();
  const quote = head[2];
  const isRaw = prefix.includes('r');
  const isFormat = prefix.includes('f');
  let i = node.from + head[0].length;
  let end = node.to;
  if (end - quote.length >= i && text.startsWith(quote, end - quote.length)) end -= quote.length;
  const replacements = isFormat ? children(node).filter((c) => c.name === 'FormatReplacement') : [];
  let r = 0;
  while (i < end) {
    if (r < replacements.length && i >= replacements[r].from) {
      const field = replacements[r];
      const inner = children(field).filter((c) => c.name !== '{' && c.name !== '}');
      // {TABLE} where TABLE is a constant string: its text, at the replacement.
      const constant = inner.length === 1 && replacement ? replacement(inner[0]) : undefined;
      if (constant && constant.holes.length === 0) out.push(constant.text, field.from, field.to);
      // {head} where head is a fragment the code composed (f"SELECT ... %s, " with values of its own): its text, its holes kept,
      // every character at the replacement. Not where a table's name goes: that reads as a name below.
      else if (constant && !identifierPosition(out.text)) pushFragment(out, constant, field.from, field.to);
      // UPDATE {table} / FROM {schema}.{table} / {table}.id: a name, not a value; named after the expression so the same hole reads as the same table.
      else if (inner.length === 1 && (identifierPosition(out.text) || qualifierPosition(text, field.to))) out.push(identifierFor(nameOf?.(inner[0]) ?? text.slice(inner[0].from, inner[0].to)), field.from, field.to);
      else out.hole(field.from, field.to);
      i = field.to;
      r++;
      continue;
    }
    const c = text[i];
    if (isFormat && (c === '{' || c === '}') && text[i + 1] === c) {
      out.push(c, i, i + 2);
      i += 2;
      continue;
    }
    if (c === '\\' && !isRaw) {
      const escape = decodeEscape(text, i, prefix.includes('b'));
      out.push(escape.value, i, i + escape.length);
      i += escape.length;
      continue;
    }
    // A run of characters that stand for themselves, up to the next one that may not (an escape, a brace, a replacement).
    const stop = r < replacements.length ? Math.min(end, replacements[r].from) : end;
    let j = i + 1;
    while (j < stop) {
      const d = text[j];
      if (d === '\\' || (isFormat && (d === '{' || d === '}'))) break;
      j++;
    }
    pushSourceRun(out, text, i, j);
    i = j;
  }
  return true;
}

const SIMPLE_ESCAPES: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

function decodeEscape(text: string, i: number, bytes: boolean): { value: string; length: number } {
  const next = text[i + 1];
  if (next === undefined) return { value: '\\', length: 1 };
  if (next === '\n') return { value: '', length: 2 };
  if (next === '\r') return { value: '', length: text[i + 2] === '\n' ? 3 : 2 };
  if (next in SIMPLE_ESCAPES) return { value: SIMPLE_ESCAPES[next], length: 2 };
  const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4));
  if (octal) return { value: String.fromCharCode(parseInt(octal[0], 8)), length: 1 + octal[0].length };
  const hex = (digits: number, offset: number) => {
    const h = text.slice(i + offset, i + offset + digits);
    return /^[0-9a-fA-F]+$/.test(h) && h.length === digits ? parseInt(h, 16) : undefined;
  };
  if (next === 'x') {
    const code = hex(2, 2);
    if (code !== undefined) return { value: String.fromCharCode(code), length: 4 };
  }
  if (!bytes && next === 'u') {
    const code = hex(4, 2);
    if (code !== undefined) return { value: String.fromCharCode(code), length: 6 };
  }
  if (!bytes && next === 'U') {
    const code = hex(8, 2);
    if (code !== undefined && code <= 0x10ffff) return { value: String.fromCodePoint(code), length: 10 };
  }
  if (!bytes && next === 'N' && text[i + 2] === '{') {
    const close = text.indexOf('}', i + 3);
    if (close > 0) return { value: '?', length: close + 1 - i };
  }
  return { value: '\\' + next, length: 2 }; // Python keeps unknown escapes as written
}

export interface ResolveContext {
  text: string;
  /** Qualified name of an expression through the file's imports (psycopg.sql.SQL), if any. */
  qualify(node: Node): string | undefined;
  /** The expression a name stands for, when it is a constant we can read. */
  constant(name: string, at: Node): Node | undefined;
  /** The drivers' SQL-building API paths. */
  sqlText: SqlTextNames;
  /** The expression `x.name` stands for: a class attribute, a query object's attribute (flow/sql-members.ts). */
  member?(node: Node): Node | undefined;
  /** The expression a call of a def of the file returns (a query builder's method). */
  returned?(call: Node): Node | undefined;
  /** The text of a constant a project module binds to a name this file imports, read there. */
  imported?(name: string, at: Node): HostText | undefined;
  /** The text of an item of a dict of SQL a project module binds to a name this file imports (`QUERIES["CLAIM"]`). */
  importedItem?(name: string, key: string, at: Node): HostText | undefined;
}

/** API paths that build SQL text (the drivers' modules list theirs). */
export interface SqlTextNames {
  /** Composable SQL templates: `sql.SQL("... {} ...").format(...)`. */
  composed: ReadonlySet<string>;
  /** Quoted names, literals and placeholders composed into such a template. */
  identifiers: ReadonlySet<string>;
  literals: ReadonlySet<string>;
  placeholders: ReadonlySet<string>;
  /** SQL with `:name` bind parameters: SQLAlchemy's text(). */
  boundText: ReadonlySet<string>;
}
const TEXT_WRAPPERS = new Set(['textwrap.dedent', 'inspect.cleandoc']);
const TEXT_METHODS = new Set(['strip', 'lstrip', 'rstrip', 'format']);
/** Methods of a text() or Composed object that keep its SQL. */
const CONSTRUCT_METHODS = new Set(['bindparams', 'columns', 'execution_options', 'as_string']);

/** The SQL text of an expression, or undefined when it is not text we can read. */
export function resolveText(node: Node | null | undefined, ctx: ResolveContext, depth = 0): HostText | undefined {
  const expr = unwrap(node);
  if (!expr || depth > 8) return undefined;
  switch (expr.name) {
    case 'String':
    case 'FormatString': {
      const out = new Builder();
      return decodeLiteral(expr, ctx.text, out, constantText(ctx, depth), nameText(ctx)) ? out.build(expr, false) : undefined;
    }
    case 'ContinuedString': {
      const out = new Builder();
      for (const part of children(expr)) if (!decodeLiteral(part, ctx.text, out, constantText(ctx, depth), nameText(ctx))) return undefined;
      return out.build(expr, false);
    }
    case 'BinaryExpression': {
      const [left, op, right] = children(expr);
      const operator = op ? ctx.text.slice(op.from, op.to) : '';
      if (operator === '%') {
        const template = resolveText(left, ctx, depth + 1);
        return template && percentFormatted(template, right, expr, ctx.text, (arg) => resolveText(arg, ctx, depth + 1));
      }
      if (operator !== '+' || !left || !right) return undefined;
      const a = resolveText(left, ctx, depth + 1);
      const b = resolveText(right, ctx, depth + 1);
      if (!a && !b) return undefined;
      const out = new Builder();
      // sql.SQL("DROP DATABASE IF EXISTS ") + sql.Identifier(name): psycopg joins a Composed's parts with nothing between
      // them and quotes the name, so `EXISTS"db"` is valid; a bare hole there would glue onto the keyword.
      const operand = (node: Node, text: HostText | undefined): void => {
        const identifier = text ? undefined : identifierArgument(node, ctx);
        if (text) out.append(text);
        else if (identifier) out.push(identifierFor(identifier), node.from, node.to);
        else out.hole(node.from, node.to);
      };
      operand(left, a);
      operand(right, b);
      const built = out.build(expr, !!(a?.composed || b?.composed));
      if (a?.colonParams || b?.colonParams) built.colonParams = true;
      const formatArgs = mergeFormatArgs(a, b, a ? a.text.length : 1);
      if (formatArgs) built.formatArgs = formatArgs;
      return built;
    }
    case 'VariableName': {
      const value = ctx.constant(ctx.text.slice(expr.from, expr.to), expr);
      if (!value) return importedText(expr, ctx);
      const inner = resolveText(value, ctx, depth + 1);
      return inner ? { ...inner, pinned: span(expr) } : undefined;
    }
    case 'MemberExpression': {
      // lezer reads `QUERIES["CLAIM"]` as a MemberExpression with brackets.
      if (expr.getChild('[')) return subscriptText(expr, ctx, depth);
      const value = ctx.member?.(expr);
      if (!value) return importedText(expr, ctx);
      const inner = resolveText(value, ctx, depth + 1);
      return inner ? { ...inner, pinned: span(expr) } : undefined;
    }
    case 'CallExpression': {
      const call = callParts(expr, ctx.text);
      if (!call) return undefined;
      const qualified = ctx.qualify(call.callee);
      if (qualified && (ctx.sqlText.composed.has(qualified) || TEXT_WRAPPERS.has(qualified))) {
        const inner = resolveText(positional(call.args, 0), ctx, depth + 1);
        return inner && ctx.sqlText.composed.has(qualified) ? { ...inner, composed: true } : inner;
      }
      if (qualified && ctx.sqlText.boundText.has(qualified)) {
        const inner = resolveText(positional(call.args, 0) ?? keyword(call.args, 'text'), ctx, depth + 1);
        return inner ? { ...inner, colonParams: true } : undefined;
      }
      if (qualified && (ctx.sqlText.identifiers.has(qualified) || ctx.sqlText.literals.has(qualified) || ctx.sqlText.placeholders.has(qualified))) {
        return composable(expr, qualified, call.args, ctx, depth);
      }
      const method = methodCall(expr, ctx.text);
      if (method?.method === 'format') {
        const template = resolveText(method.object, ctx, depth + 1);
        // psycopg.sql.SQL(...).format(...): the arguments are composed into the text where they can be read.
        if (template?.composed) return composeFormat(template, call.args, expr, ctx, depth);
        return template ? formatTableNames(template, call.args, expr, ctx) : undefined;
      }
      if (method?.method === 'join') {
        const separator = resolveText(method.object, ctx, depth + 1);
        if (separator?.composed) return composeJoin(separator, positional(call.args, 0), expr, ctx, depth);
        return undefined;
      }
      if (method?.method === 'bindparams') {
        const inner = resolveText(method.object, ctx, depth + 1);
        if (!inner) return undefined;
        const boundParams = new Map(inner.boundParams ?? []);
        for (const a of call.args) if (a.name) boundParams.set(a.name, a.value);
        return { ...inner, boundParams };
      }
      if (method && (TEXT_METHODS.has(method.method) || CONSTRUCT_METHODS.has(method.method))) return resolveText(method.object, ctx, depth + 1);
      // QUERIES.get("CLAIM"): the item, as QUERIES["CLAIM"] (a default given for a missing key is not read).
      if (method?.method === 'get' && call.args.length === 1 && !call.args[0].name && !call.args[0].star) {
        const key = keyText(call.args[0].value, ctx, depth);
        const item = key !== undefined ? dictItemText(method.object, key, expr, ctx, (value) => resolveText(value, ctx, depth + 1)) : undefined;
        if (item) return item;
      }
      // A query builder's method: the SQL it returns.
      const returned = ctx.returned?.(expr);
      const inner = returned ? resolveText(returned, ctx, depth + 1) : undefined;
      return inner ? { ...inner, pinned: span(expr) } : undefined;
    }
    default:
      return undefined;
  }
}

/** `QUERIES["CLAIM"]`: an item of a dict of SQL by a key written in the code (flow/sql-dicts.ts). */
function subscriptText(expr: Node, ctx: ResolveContext, depth: number): HostText | undefined {
  const parts = children(expr);
  const index = parts.filter((c, i) => i > 0 && c.name !== '[' && c.name !== ']');
  const key = index.length === 1 ? keyText(index[0], ctx, depth) : undefined;
  return parts[0] && key !== undefined ? dictItemText(parts[0], key, expr, ctx, (item) => resolveText(item, ctx, depth + 1)) : undefined;
}

/** A key written as a plain string or a constant that holds one. */
function keyText(node: Node | undefined, ctx: ResolveContext, depth: number): string | undefined {
  const n = unwrap(node);
  if (!n || (n.name !== 'String' && n.name !== 'VariableName')) return undefined;
  const key = resolveText(n, ctx, depth + 1);
  return key && key.holes.length === 0 ? key.text : undefined;
}

/** A constant imported from a project module, read there: every character stands at the name that imports it. */
function importedText(expr: Node, ctx: ResolveContext): HostText | undefined {
  // `q.SET_TENANT`, `app.queries.SET_TENANT`, `Q.SET_TENANT`: the dotted name, the module or class read where it is imported.
  const name = !ctx.imported ? undefined : expr.name === 'VariableName' ? ctx.text.slice(expr.from, expr.to) : dottedName(expr, ctx.text);
  const there = name ? ctx.imported?.(name, expr) : undefined;
  if (!there) return undefined;
  const at = span(expr);
  return { text: there.text, starts: there.starts.map(() => at.start), ends: there.ends.map(() => at.end), holes: there.holes, span: at, composed: there.composed, colonParams: there.colonParams };
}

/** The text so far ends where SQL wants a table name: after FROM, UPDATE, INTO, JOIN, TABLE, ONLY, OF (`FOR UPDATE OF`), or a schema's dot. */
export function identifierPosition(before: string): boolean {
  // Also the name a DDL statement makes or drops (`CREATE TABLE IF NOT EXISTS {}`, `DROP INDEX IF EXISTS {}`) and the
  // table an index is on (`CREATE INDEX ix ON {}`).
  return /(\b(from|update|into|join|table|only|of)\s+|\bif\s+(not\s+)?exists\s+|\bindex\b[^()]*\bon\s+|\w\.)$/i.test(before);
}

/** A printf-style conversion of Python's `%` operator: `%s`, `%(name)s`, `%5.2f`, `%%`. */
const PERCENT_SPEC = /^%(?:\(([^)]*)\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?([diouxXeEfFgGcrsa%])/;

/**
 * `template % args`: Python fills every conversion in the text before any driver sees it, so each is a value or a
 * name the code computed (`FROM %s` % table, `ST_As%s(...)`), not the driver's placeholder, and `%%` is one `%`
 * (`... = %%s` % table leaves the driver its `%s`). A name where a table goes is named after the argument.
 */
function percentFormatted(template: HostText, args: Node | undefined, node: Node, source: string, resolve: (arg: Node) => HostText | undefined): HostText {
  if (!template.text.includes('%')) return template;
  const items = unwrap(args)?.name === 'TupleExpression' ? children(unwrap(args)!).filter((c) => !['(', ')', ','].includes(c.name)) : args ? [args] : [];
  const from = (k: number) => template.pinned?.start ?? template.starts[k];
  const to = (k: number) => template.pinned?.end ?? template.ends[k];
  const holeEnd = new Map(template.holes.map((h) => [h.start, h.end]));
  const out = new Builder();
  const text = template.text;
  let positional = 0;
  for (let k = 0; k < text.length; ) {
    const end = holeEnd.get(k);
    if (end !== undefined) {
      const at = out.text.length;
      for (let m = k; m < end; m++) out.push(text[m], from(m), to(m));
      out.holes.push({ start: at, end: at + end - k });
      k = end;
      continue;
    }
    const spec = text[k] === '%' ? PERCENT_SPEC.exec(text.slice(k, k + 40)) : null;
    if (!spec) {
      out.push(text[k], from(k), to(k));
      k++;
      continue;
    }
    const last = k + spec[0].length - 1;
    if (spec[2] === '%') out.push('%', from(k), to(last));
    else {
      const arg = spec[1] === undefined ? items[positional++] : undefined;
      const name = spec[1] ?? (arg ? source.slice(arg.from, arg.to) : `arg${positional}`);
      // A fragment the code built (`COPY (%s) TO STDOUT` % select): its text, every character at the conversion.
      const fragment = arg && spec[2] === 's' ? resolve(arg) : undefined;
      if (identifierPosition(out.text) || qualifierPosition(text, last + 1)) out.push(identifierFor(name), from(k), to(last));
      else if (fragment) pushFragment(out, fragment, from(k), to(last));
      else out.hole(from(k), to(last));
    }
    k = last + 1;
  }
  return out.build(node, template.composed);
}

/** The field is followed by `.`: it qualifies a column (`{jobs}.id`, `RETURNING {jobs}.*`), so it names a table. */
export function qualifierPosition(after: string, at: number): boolean {
  return after[at] === '.' && /[A-Za-z_*"]/.test(after[at + 1] ?? '');
}

/**
 * An identifier standing for the expression that computes a name: `self.table` -> table. The method's receiver is
 * dropped, so `self.app.prefix` in a method and `app.prefix` in a function that is handed the same object name the
 * same table.
 */
export function identifierFor(expression: string): string {
  // Quoted: `table` or `order` are reserved words.
  const name = expression.replace(/\b(self|cls)\s*\.\s*/g, '').replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').toLowerCase();
  return `"${/^[a-z_]/.test(name) ? name : `t_${name}`}"`;
}

/** The expression of sql.Identifier(expr) when it is not a literal (a name the code computes). */
function identifierArgument(arg: Node, ctx: ResolveContext, depth = 0): string | undefined {
  const expr = unwrap(arg);
  // jobs = sql.Identifier(f"{prefix}jobs") ... .format(jobs=jobs): the name's value.
  if (expr?.name === 'VariableName' && depth < 4) {
    const value = ctx.constant(ctx.text.slice(expr.from, expr.to), expr);
    return value ? identifierArgument(value, ctx, depth + 1) : undefined;
  }
  const call = callParts(arg, ctx.text);
  if (!call || !ctx.sqlText.identifiers.has(ctx.qualify(call.callee) ?? '')) return undefined;
  const parts = call.args.filter((a) => !a.name && !a.star);
  if (parts.length === 0) return undefined;
  return parts.map((p) => ctx.text.slice(p.value.from, p.value.to)).join('.');
}

/**
 * The expression a name in a table's place stands for: `t = self.names.jobs` then `UPDATE {t}` names the table
 * after `self.names.jobs`, as `UPDATE {self.names.jobs}` elsewhere does.
 */
function nameText(ctx: ResolveContext): (expr: Node) => string | undefined {
  return (expr) => {
    if (expr.name !== 'VariableName') return undefined;
    const value = unwrap(ctx.constant(ctx.text.slice(expr.from, expr.to), expr));
    return value && (value.name === 'MemberExpression' || value.name === 'VariableName') ? ctx.text.slice(value.from, value.to) : undefined;
  };
}

/** Text of the fragments an f-string's replacements compose: literals, f-strings and their `+`. */
const FRAGMENT_KINDS = new Set(['String', 'ContinuedString', 'FormatString', 'BinaryExpression']);

/**
 * A constant's text for an f-string replacement `{NAME}`: a literal, or a fragment the code composed (an f-string,
 * a `+` of them) held by a name of the file, a constant imported from a project module, or a class attribute
 * (`{self.CLAIM_WHERE}`). Anything else (a number, a call) stays a value.
 */
function constantText(ctx: ResolveContext, depth: number): (expr: Node) => HostText | undefined {
  return (expr) => {
    if (depth > 6) return undefined;
    if (expr.name === 'MemberExpression') {
      const member = ctx.member?.(expr);
      if (!member) return importedText(expr, ctx);
      const kind = unwrap(member)?.name;
      return member && kind && FRAGMENT_KINDS.has(kind) ? resolveText(member, ctx, depth + 1) : undefined;
    }
    if (expr.name !== 'VariableName') return undefined;
    const value = ctx.constant(ctx.text.slice(expr.from, expr.to), expr);
    if (!value) return importedText(expr, ctx);
    const kind = unwrap(value)?.name;
    if (!kind || !FRAGMENT_KINDS.has(kind)) return undefined;
    // A `%` or `+` that is not text (a number's arithmetic) reads as no text.
    return resolveText(value, ctx, depth + 1);
  };
}

/** Appends a fragment's text at one host range, keeping its holes (the values it composed). */
function pushFragment(out: Builder, fragment: HostText, from: number, to: number): void {
  const offset = out.text.length;
  out.push(fragment.text, from, to);
  for (const h of fragment.holes) out.holes.push({ start: h.start + offset, end: h.end + offset });
}

/** The string value of a literal argument (`"app.tenant"`), if it is one with no replacements. */
function literalString(node: Node | undefined, ctx: ResolveContext, depth: number): string | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  const kind = expr.name === 'VariableName' ? unwrap(ctx.constant(ctx.text.slice(expr.from, expr.to), expr))?.name : expr.name;
  if (kind !== 'String' && kind !== 'ContinuedString') return undefined;
  const host = resolveText(expr, ctx, depth + 1);
  return host && host.holes.length === 0 ? host.text : undefined;
}

/** sql.Identifier("a", "b") -> "a"."b"; sql.Literal("x") -> 'x'; sql.Placeholder() -> %s: the text psycopg composes. */
function composable(expr: Node, qualified: string, args: Arg[], ctx: ResolveContext, depth: number): HostText | undefined {
  const out = new Builder();
  if (ctx.sqlText.placeholders.has(qualified)) {
    const name = literalString(positional(args, 0) ?? keyword(args, 'name'), ctx, depth);
    if (args.length > 0 && name === undefined) return undefined;
    out.push(name === undefined ? '%s' : `%(${name})s`, expr.from, expr.to);
    return out.build(expr, true);
  }
  if (ctx.sqlText.identifiers.has(qualified)) {
    const parts = args.filter((a) => !a.name && !a.star).map((a) => literalString(a.value, ctx, depth));
    if (parts.length === 0 || parts.some((p) => p === undefined)) return undefined;
    out.push(parts.map((p) => `"${p!.replace(/"/g, '""')}"`).join('.'), expr.from, expr.to);
    return out.build(expr, true);
  }
  const value = unwrap(positional(args, 0));
  if (!value) return undefined;
  const raw = ctx.text.slice(value.from, value.to);
  const literal = literalString(value, ctx, depth);
  if (literal !== undefined) out.push(`'${literal.replace(/'/g, "''")}'`, expr.from, expr.to);
  else if (value.name === 'Number' && /^[\d.]+$/.test(raw)) out.push(raw, expr.from, expr.to);
  else if (value.name === 'Boolean' || raw === 'True' || raw === 'False') out.push(raw.toLowerCase(), expr.from, expr.to);
  else if (value.name === 'None') out.push('NULL', expr.from, expr.to);
  else return undefined;
  return out.build(expr, true);
}

/** One `{}` / `{0}` / `{name}` field of a template, at text offsets [start, end). */
interface FormatField {
  start: number;
  end: number;
  key: string;
}

function formatFields(text: string): FormatField[] {
  const fields: FormatField[] = [];
  forEachCodeChar(text, (i) => {
    if (text[i] !== '{') return;
    if (text[i + 1] === '{') return i + 2;
    const close = text.indexOf('}', i + 1);
    if (close < 0 || !/^\w*$/.test(text.slice(i + 1, close))) return;
    fields.push({ start: i, end: close + 1, key: text.slice(i + 1, close) });
    return close + 1;
  });
  return fields;
}

/** Single-quoted literals of a template with `{}` fields inside, at text offsets [start, end) (quotes included). */
function literalsWithFields(text: string): { start: number; end: number; fields: FormatField[] }[] {
  const code = new Uint8Array(text.length + 1);
  forEachCodeChar(text, (i) => {
    code[i] = 1;
  });
  code[text.length] = 1;
  const out: { start: number; end: number; fields: FormatField[] }[] = [];
  for (let i = 0; i < text.length; i++) {
    if (code[i] || text[i] !== "'" || (i > 0 && !code[i - 1])) continue;
    let end = i + 1;
    while (!code[end]) end++;
    const body = text.slice(i, end);
    if (!body.endsWith("'")) continue;
    const fields = [...body.matchAll(/(?<!\{)\{(\w*)\}(?!\})/g)].map((m) => ({ start: i + m.index, end: i + m.index + m[0].length, key: m[1] }));
    if (fields.length > 0) out.push({ start: i, end, fields });
    i = end - 1;
  }
  return out;
}

/**
 * sql.SQL("SET {} = {}").format(sql.Identifier("search_path"), value): each
 * field becomes the text of its argument where that is readable; the others
 * stay `{}` fields (placeholders to the analyzer), with their argument kept
 * so the site's params can say where the value comes from.
 */
function composeFormat(template: HostText, args: Arg[], expr: Node, ctx: ResolveContext, depth: number): HostText {
  const positionalArgs = args.filter((a) => !a.name && !a.star).map((a) => a.value);
  const named = new Map(args.filter((a) => a.name).map((a) => [a.name!, a.value]));
  const out = new Builder();
  const formatArgs = new Map<number, Node>();
  let next = 0;
  let last = 0;
  const copy = (from: number, to: number) => copyText(template, out, from, to);
  const argOf = (key: string) => (key === '' ? positionalArgs[next++] : /^\d+$/.test(key) ? positionalArgs[Number(key)] : named.get(key));
  const literals = literalsWithFields(template.text);
  const items = [...formatFields(template.text).map((field) => ({ field, literal: undefined })), ...literals.map((literal) => ({ field: undefined, literal }))].sort(
    (a, b) => (a.field ?? a.literal!).start - (b.field ?? b.literal!).start,
  );
  for (const { field, literal } of items) {
    if (literal) {
      // psycopg fills fields inside quotes too (`interval '{secs} seconds'`): a literal the code fills is a value it
      // computes, `cast(<value> as interval)` where a type names the literal.
      const fieldArgs = literal.fields.map((f) => argOf(f.key));
      const typed = /\b(interval|timestamptz|timestamp|date|time|numeric|jsonb|json|uuid)\s*$/i.exec(template.text.slice(last, literal.start));
      const start = typed ? literal.start - typed[0].length : literal.start;
      copy(last, start);
      last = literal.end;
      const from = template.pinned?.start ?? template.starts[start];
      const to = template.pinned?.end ?? template.ends[literal.end - 1];
      if (typed) out.push('CAST(', from, to);
      if (fieldArgs.length === 1 && fieldArgs[0]) formatArgs.set(out.text.length, fieldArgs[0]);
      out.hole(from, to);
      if (typed) out.push(` AS ${typed[1]})`, from, to);
      continue;
    }
    copy(last, field!.start);
    last = field!.end;
    const arg = argOf(field!.key);
    const value = arg ? resolveText(arg, ctx, depth + 1) : undefined;
    if (value && value.composed) {
      out.append(value);
      continue;
    }
    // UPDATE {} with sql.Identifier(table): a table name the code chooses, named after its expression.
    const identifier = arg ? identifierArgument(arg, ctx) : undefined;
    if (identifier && arg && (identifierPosition(out.text) || qualifierPosition(template.text, field!.end))) {
      out.push(identifierFor(identifier), arg.from, arg.to);
      continue;
    }
    // UPDATE {jobs} with jobs=self.jobs_table (a name the analysis cannot read): a value cannot stand where a table
    // is named, so it is the table the expression names; the same expression names the same table in every statement.
    const named = arg ? unwrap(arg) : undefined;
    if (named && (named.name === 'VariableName' || named.name === 'MemberExpression') && (identifierPosition(out.text) || qualifierPosition(template.text, field!.end))) {
      out.push(identifierFor(ctx.text.slice(named.from, named.to)), arg!.from, arg!.to);
      continue;
    }
    if (arg) formatArgs.set(out.text.length, arg);
    copy(field!.start, field!.end);
  }
  copy(last, template.text.length);
  const built = out.build(expr, true);
  if (formatArgs.size > 0) built.formatArgs = formatArgs;
  return built;
}

/**
 * "DELETE FROM {table} ...".format(table=...) on a plain string: a field where SQL names a table is that table, named
 * after its argument's expression as an f-string's `{table}` is (`quote_name(cls._meta.db_table)` names the same
 * table at each use); every other field stays as it is written.
 */
function formatTableNames(template: HostText, args: Arg[], expr: Node, ctx: ResolveContext): HostText {
  const positionalArgs = args.filter((a) => !a.name && !a.star).map((a) => a.value);
  const named = new Map(args.filter((a) => a.name).map((a) => [a.name!, a.value]));
  let next = 0;
  const names: { field: FormatField; arg: Node }[] = [];
  for (const field of formatFields(template.text)) {
    const arg = unwrap(field.key === '' ? positionalArgs[next++] : /^\d+$/.test(field.key) ? positionalArgs[Number(field.key)] : named.get(field.key));
    if (!arg || !NAMING_EXPRESSIONS.has(arg.name)) continue;
    // A field the name goes on with (`{}_task_id_idx`) is only part of a name: left as it is written.
    const partOfName = /^\w/.test(template.text.slice(field.end));
    if ((identifierPosition(template.text.slice(0, field.start)) && !partOfName) || qualifierPosition(template.text, field.end)) names.push({ field, arg });
  }
  if (names.length === 0) return template;
  const out = new Builder();
  let last = 0;
  const copy = (from: number, to: number) => copyText(template, out, from, to);
  for (const { field, arg } of names) {
    copy(last, field.start);
    out.push(identifierFor(ctx.text.slice(arg.from, arg.to)), arg.from, arg.to);
    last = field.end;
  }
  copy(last, template.text.length);
  return { ...out.build(expr, false), ...(template.colonParams && { colonParams: true }) };
}

/** Expressions that can hold a table's name: a name, a member, a call (`quote_name(...)`). */
const NAMING_EXPRESSIONS = new Set(['VariableName', 'MemberExpression', 'CallExpression']);

/** sql.SQL(", ").join([sql.Identifier("a"), ...]): the parts, readable ones only. */
function composeJoin(separator: HostText, list: Node | undefined, expr: Node, ctx: ResolveContext, depth: number): HostText | undefined {
  const items = unwrap(list);
  if (!items || (items.name !== 'ArrayExpression' && items.name !== 'TupleExpression')) return undefined;
  const parts = children(items).filter((c) => !['[', ']', '(', ')', ','].includes(c.name));
  const out = new Builder();
  parts.forEach((part, k) => {
    if (k > 0) out.append(separator);
    const value = resolveText(part, ctx, depth + 1);
    if (value) out.append(value);
    else out.hole(part.from, part.to);
  });
  return out.build(expr, true);
}

function mergeFormatArgs(a: HostText | undefined, b: HostText | undefined, offset: number): Map<number, Node> | undefined {
  if (!a?.formatArgs && !b?.formatArgs) return undefined;
  const merged = new Map(a?.formatArgs ?? []);
  for (const [at, node] of b?.formatArgs ?? []) merged.set(at + offset, node);
  return merged;
}

/** True for `sql.SQL(...)` (psycopg or psycopg2), possibly with `.format(...)` after it. */
export function isComposedSql(node: Node, ctx: ResolveContext): boolean {
  const call = callParts(node, ctx.text);
  if (!call) return false;
  const qualified = ctx.qualify(call.callee);
  return !!qualified && ctx.sqlText.composed.has(qualified);
}

export { dottedName };

/** Characters `from`..`to` of a text into a builder, each with its source position, a hole of the text as a hole. */
function copyText(template: HostText, out: Builder, from: number, to: number): void {
  for (let k = from; k < to; k++) {
    const hole = template.holes.find((h) => h.start === k);
    if (hole) out.hole(template.starts[k], template.ends[k]);
    else out.push(template.text[k], template.pinned?.start ?? template.starts[k], template.pinned?.end ?? template.ends[k]);
  }
}
