// Python string literals as SQL text with a map back to the host file:
// prefixes, escapes, implicit concatenation, f-string replacements (holes),
// `+` concatenation, `%` and `.format()` (psycopg's placeholders look the
// same), psycopg.sql.SQL(...) and names of constants.
import { HostTextBuilder, toHost, type HostText as BaseHostText } from '../host-text.ts';
import { callParts, children, dottedName, methodCall, positional, span, unwrap, type Node } from './syntax.ts';

export interface HostText extends BaseHostText {
  /** The text passed through psycopg.sql.SQL(). */
  composed: boolean;
}

export { toHost };

class Builder extends HostTextBuilder {
  build(node: Node, composed: boolean): HostText {
    return { ...this.done(span(node)), composed };
  }
}

/** Decodes one String or FormatString node into the builder; false when it is not a literal we read. */
function decodeLiteral(node: Node, text: string, out: Builder): boolean {
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
      out.hole(replacements[r].from, replacements[r].to);
      i = replacements[r].to;
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
    out.push(c, i, i + 1);
    i++;
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
}

const SQL_CLASSES = new Set(['psycopg.sql.SQL', 'psycopg2.sql.SQL']);
const TEXT_WRAPPERS = new Set(['textwrap.dedent', 'inspect.cleandoc']);
const TEXT_METHODS = new Set(['strip', 'lstrip', 'rstrip', 'format']);

/** The SQL text of an expression, or undefined when it is not text we can read. */
export function resolveText(node: Node | null | undefined, ctx: ResolveContext, depth = 0): HostText | undefined {
  const expr = unwrap(node);
  if (!expr || depth > 8) return undefined;
  switch (expr.name) {
    case 'String':
    case 'FormatString': {
      const out = new Builder();
      return decodeLiteral(expr, ctx.text, out) ? out.build(expr, false) : undefined;
    }
    case 'ContinuedString': {
      const out = new Builder();
      for (const part of children(expr)) if (!decodeLiteral(part, ctx.text, out)) return undefined;
      return out.build(expr, false);
    }
    case 'BinaryExpression': {
      const [left, op, right] = children(expr);
      const operator = op ? ctx.text.slice(op.from, op.to) : '';
      if (operator === '%') return resolveText(left, ctx, depth + 1);
      if (operator !== '+' || !left || !right) return undefined;
      const a = resolveText(left, ctx, depth + 1);
      const b = resolveText(right, ctx, depth + 1);
      if (!a && !b) return undefined;
      const out = new Builder();
      if (a) out.append(a);
      else out.hole(left.from, left.to);
      if (b) out.append(b);
      else out.hole(right.from, right.to);
      return out.build(expr, !!(a?.composed || b?.composed));
    }
    case 'VariableName': {
      const value = ctx.constant(ctx.text.slice(expr.from, expr.to), expr);
      if (!value) return undefined;
      const inner = resolveText(value, ctx, depth + 1);
      return inner ? { ...inner, pinned: span(expr) } : undefined;
    }
    case 'CallExpression': {
      const call = callParts(expr, ctx.text);
      if (!call) return undefined;
      const qualified = ctx.qualify(call.callee);
      if (qualified && (SQL_CLASSES.has(qualified) || TEXT_WRAPPERS.has(qualified))) {
        const inner = resolveText(positional(call.args, 0), ctx, depth + 1);
        return inner && SQL_CLASSES.has(qualified) ? { ...inner, composed: true } : inner;
      }
      const method = methodCall(expr, ctx.text);
      if (method && TEXT_METHODS.has(method.method)) return resolveText(method.object, ctx, depth + 1);
      return undefined;
    }
    default:
      return undefined;
  }
}

/** True for `sql.SQL(...)` (psycopg or psycopg2), possibly with `.format(...)` after it. */
export function isComposedSql(node: Node, ctx: ResolveContext): boolean {
  const call = callParts(node, ctx.text);
  if (!call) return false;
  const qualified = ctx.qualify(call.callee);
  return !!qualified && SQL_CLASSES.has(qualified);
}

export { dottedName };
