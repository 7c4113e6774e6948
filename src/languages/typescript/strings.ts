// JS/TS string literals and templates as SQL text, with a map from each
// character of the text (the cooked value) back to the host file: escapes in
// string literals and templates, `${...}` interpolations as holes, `+`
// concatenation, and names of constants declared in the file.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { HostTextBuilder as Builder, type HostText } from '../host-text.ts';
import { span, unwrap, type Node } from './syntax.ts';
import { productionBranch, productionReturn } from './test-env.ts';

export { toHost, type HostText } from '../host-text.ts';

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };

/**
 * Decodes the source of a string or template part (between its delimiters)
 * starting at host offset `base`, one escape at a time, so every cooked unit
 * knows the raw characters it came from.
 */
function decode(source: string, base: number, out: Builder, template: boolean): boolean {
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '\r' && template) {
      // Template line terminators are normalised: CRLF and CR read as LF.
      const width = source[i + 1] === '\n' ? 2 : 1;
      out.push('\n', base + i, base + i + width);
      i += width;
      continue;
    }
    if (c !== '\\') {
      out.push(c, base + i, base + i + 1);
      i++;
      continue;
    }
    const next = source[i + 1];
    if (next === undefined) return false;
    let width = 2;
    let value: string;
    if (next in SIMPLE_ESCAPES && !(next === '0' && /[0-9]/.test(source[i + 2] ?? ''))) {
      value = SIMPLE_ESCAPES[next];
    } else if (next === 'x') {
      const hex = source.slice(i + 2, i + 4);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return false;
      value = String.fromCharCode(parseInt(hex, 16));
      width = 4;
    } else if (next === 'u') {
      let code: number;
      if (source[i + 2] === '{') {
        const close = source.indexOf('}', i + 3);
        if (close < 0) return false;
        const hex = source.slice(i + 3, close);
        if (!/^[0-9a-fA-F]+$/.test(hex)) return false;
        code = parseInt(hex, 16);
        width = close + 1 - i;
      } else {
        const hex = source.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return false;
        code = parseInt(hex, 16);
        width = 6;
      }
      if (code > 0x10ffff) return false;
      value = String.fromCodePoint(code);
    } else if (next === '\n' || next === '\u2028' || next === '\u2029') {
      value = ''; // line continuation
    } else if (next === '\r') {
      value = '';
      if (source[i + 2] === '\n') width = 3;
    } else if (/[1-7]/.test(next) || (next === '0' && /[0-9]/.test(source[i + 2] ?? ''))) {
      if (template) return false;
      const octal = /^[0-7]{1,3}/.exec(source.slice(i + 1))![0];
      const digits = parseInt(octal, 8) > 255 ? octal.slice(0, 2) : octal;
      value = String.fromCharCode(parseInt(digits, 8));
      width = 1 + digits.length;
    } else {
      value = next; // \' \" \\ \` \$ and identity escapes
    }
    out.push(value, base + i, base + i + width);
    i += width;
  }
  return true;
}

/** A string literal: its cooked text, each unit mapped to its raw source. */
export function literalText(node: TSESTree.Literal, source: string): HostText | undefined {
  if (typeof node.value !== 'string') return undefined;
  const out = new Builder();
  const [start, end] = node.range;
  if (!decode(source.slice(start + 1, end - 1), start + 1, out, false)) return undefined;
  // The decoder must agree with the parser; if not, the map cannot be trusted.
  if (out.text !== node.value) return undefined;
  return out.done(span(node));
}

/**
 * A template's quasis joined with one hole per interpolation. The parts are
 * located in the source (parsers disagree on whether a TemplateElement's range
 * includes its delimiters): a part runs to the first unescaped '`' or '${'.
 */
export function templateText(node: TSESTree.TemplateLiteral, source: string, interpolation: (expression: Node, index: number) => HostText | undefined = () => undefined): HostText | undefined {
  const out = new Builder();
  let at = node.range[0] + 1;
  for (let q = 0; q < node.quasis.length; q++) {
    const end = partEnd(source, at, node.range[1]);
    if (end < 0) return undefined;
    const before = out.text.length;
    if (!decode(source.slice(at, end), at, out, true)) return undefined;
    // The decoder must agree with the parser; if not, the map cannot be trusted.
    if (out.text.slice(before) !== node.quasis[q].value.cooked) return undefined;
    if (q === node.quasis.length - 1) break;
    const expression = node.expressions[q];
    const inner = interpolation(expression, q);
    if (inner) out.append(inner);
    else out.hole(end, expression.range[1] + 1);
    at = closingBrace(source, expression.range[1], node.range[1]);
    if (at < 0) return undefined;
  }
  return out.done(span(node));
}

function partEnd(source: string, from: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '`') return i;
    if (c === '$' && source[i + 1] === '{') return i;
  }
  return -1;
}

/** After an interpolation's expression: skip blanks and comments to its '}', return the offset after it. */
function closingBrace(source: string, from: number, limit: number): number {
  let i = from;
  while (i < limit) {
    const c = source[i];
    if (c === '}') return i + 1;
    if (c === '/' && source[i + 1] === '/') {
      const nl = source.indexOf('\n', i);
      i = nl < 0 ? limit : nl + 1;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      i = close < 0 ? limit : close + 2;
      continue;
    }
    if (/\s/.test(c) || c === ')') {
      i++;
      continue;
    }
    return -1;
  }
  return -1;
}

export interface ResolveContext {
  source: string;
  /** The initializer of a `const` visible at the use, if the name is one (a function declaration is its own). */
  constant(name: string, at: Node): Node | undefined;
  /** Inside a helper's returned SQL: what its parameters were given at the call. */
  bindings?: ReadonlyMap<string, Node | undefined>;
  /** The context of the call, for what the helper's arguments stand for. */
  caller?: ResolveContext;
  /**
   * SQL text a name imported from a project module holds there (`import { CLAIM } from './sql'`), read in that
   * module; `members`: the properties read from it (`q.CLAIM` with `import * as q`, `Q.claim` of an exported object).
   */
  imported?(name: string, at: Node, members?: readonly string[]): HostText | undefined;
  /** Told of each helper function whose returned SQL was read at a call (flow/returned-sql.ts reads the others). */
  readHelper?(fn: Node): void;
}

/** What a function returns when that is one expression: an arrow's body, or the single return of its block. */
function returnedExpression(fn: Node): Node | undefined {
  if (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression' && fn.type !== 'FunctionDeclaration') return undefined;
  if (!fn.body) return undefined;
  if (fn.body.type !== 'BlockStatement') return fn.body as Node;
  // A return only a test run takes (`if (env === 'test') return base;`) is not what production sends.
  return productionReturn(fn.body.body);
}

/**
 * SQL returned by a helper of the file, `claimSql('jobs')` with `function
 * claimSql(table) { return `UPDATE ${table} ...` }`: its text with the
 * arguments the call gives (a literal or a constant argument is text, any
 * other a hole), pinned to the call.
 */
function helperText(call: TSESTree.CallExpression, ctx: ResolveContext, depth: number): HostText | undefined {
  const callee = unwrap(call.callee);
  if (callee?.type !== 'Identifier') return undefined;
  const fn = unwrap(ctx.constant(callee.name, callee));
  const returned = fn ? returnedExpression(fn) : undefined;
  if (!fn || !returned || !('params' in fn)) return undefined;
  const bindings = new Map<string, Node | undefined>();
  fn.params.forEach((p, i) => {
    if (p.type === 'Identifier') bindings.set(p.name, call.arguments[i] as Node | undefined);
    else if (p.type === 'AssignmentPattern' && p.left.type === 'Identifier') bindings.set(p.left.name, (call.arguments[i] as Node | undefined) ?? p.right);
  });
  const resolved = resolveText(returned, { ...ctx, bindings, caller: ctx }, depth + 1);
  if (resolved) ctx.readHelper?.(fn);
  return resolved ? { ...resolved, pinned: span(call) } : undefined;
}

/**
 * The SQL text an expression stands for: a string literal, a template, `+`
 * concatenation, or the name of a constant of this file. `undefined` when it
 * is computed at run time (the site is then unknown).
 */
export function resolveText(node: Node | null | undefined, ctx: ResolveContext, depth = 0): HostText | undefined {
  const n = unwrap(node);
  if (!n || depth > 8) return undefined;
  switch (n.type) {
    case 'Literal':
      return literalText(n, ctx.source);
    case 'TemplateLiteral':
      return templateText(n, ctx.source, (expression) => {
        // A constant interpolated into SQL text is SQL text (`${JOBS} where ...`).
        const inner = unwrap(expression);
        if (inner?.type === 'Identifier' && ctx.bindings?.has(inner.name)) {
          // A helper's parameter: what the call gave it, if that is text.
          const given = ctx.bindings.get(inner.name);
          return given && ctx.caller ? resolveText(given, ctx.caller, depth + 1) : undefined;
        }
        if (inner?.type === 'Identifier' || inner?.type === 'MemberExpression') {
          const resolved = resolveText(inner, ctx, depth + 1);
          if (resolved) return resolved;
        }
        return inner ? optionalClause(inner, ctx, depth) : undefined;
      });
    case 'BinaryExpression': {
      if (n.operator !== '+') return undefined;
      const left = resolveText(n.left as Node, ctx, depth + 1);
      const right = resolveText(n.right, ctx, depth + 1);
      const out = new Builder();
      if (left) out.append(left);
      else out.hole(n.left.range[0], n.left.range[1]);
      if (right) out.append(right);
      else out.hole(n.right.range[0], n.right.range[1]);
      if (!left && !right) return undefined;
      return out.done(span(n));
    }
    case 'CallExpression':
      return helperText(n, ctx, depth);
    case 'ConditionalExpression': {
      // `NODE_ENV === 'test' ? '' : 'FOR UPDATE SKIP LOCKED'`: production's text; any other choice is not known here.
      const branch = productionBranch(n.test as Node);
      return branch ? resolveText(n[branch] as Node, ctx, depth + 1) : undefined;
    }
    case 'Identifier':
    case 'MemberExpression': {
      if (n.type === 'Identifier' && ctx.bindings?.has(n.name)) {
        const given = ctx.bindings.get(n.name);
        return given && ctx.caller ? resolveText(given, ctx.caller, depth + 1) : undefined;
      }
      const init = constantInit(n, ctx);
      if (!init) return importedText(n, ctx);
      const resolved = resolveText(init, ctx, depth + 1);
      return resolved ? { ...resolved, pinned: span(n) } : undefined;
    }
    default:
      return undefined;
  }
}

/** Text that is empty: `''`, or a template with no interpolation and nothing but blanks. */
function isEmptyText(n: Node | undefined): boolean {
  if (n?.type === 'Literal') return typeof n.value === 'string' && n.value.trim() === '';
  return n?.type === 'TemplateLiteral' && n.expressions.length === 0 && n.quasis.every((q) => (q.value.cooked ?? '').trim() === '');
}

/** Words a clause that only narrows or orders what the statement around it reads begins with. */
const NARROWING = /^(and|where|order\s+by|limit|offset)\b/i;

/**
 * An optional clause interpolated into SQL text, written at the hole or held
 * in a const (`const filter = type ? `AND type = $3` : '';`): the code sends
 * the statement with and without it, and the one without it is read, as
 * flow/fragments.ts does for a tagged query's fragment. Only a clause that
 * narrows (`AND ...`, `WHERE ...`, an order or a limit): one that widens
 * (`OR status = 'running'`) changes what the statement takes, and stays a hole.
 */
function optionalClause(n: Node, ctx: ResolveContext, depth: number): HostText | undefined {
  const held = n.type === 'Identifier' || n.type === 'MemberExpression' ? constantInit(n, ctx) : n;
  if (held?.type !== 'ConditionalExpression') return undefined;
  const branches = [unwrap(held.consequent), unwrap(held.alternate)];
  const empty = branches.findIndex(isEmptyText);
  const clause = branches[1 - empty];
  if (empty < 0 || !clause || isEmptyText(clause)) return undefined;
  const lead = clause.type === 'Literal' && typeof clause.value === 'string' ? clause.value : clause.type === 'TemplateLiteral' ? (clause.quasis[0]?.value.cooked ?? '') : undefined;
  if (lead === undefined || !NARROWING.test(lead.trim())) return undefined;
  return resolveText(branches[empty], ctx, depth + 1);
}

/** A constant imported from a project module, read there: every character stands at the name that imports it. */
function importedText(n: TSESTree.Identifier | TSESTree.MemberExpression, ctx: ResolveContext): HostText | undefined {
  if (!ctx.imported) return undefined;
  // `q.SET_TENANT`, `Q.claim.sql`: the name the chain starts with and the properties read.
  const members: string[] = [];
  let root: Node | undefined = n;
  while (root?.type === 'MemberExpression') {
    if (root.computed || root.property.type !== 'Identifier') return undefined;
    members.unshift(root.property.name);
    root = unwrap(root.object);
  }
  if (root?.type !== 'Identifier' || members.length > 3) return undefined;
  const there = ctx.imported(root.name, n, members);
  if (!there) return undefined;
  const at = span(n);
  return { text: there.text, starts: there.starts.map(() => at.start), ends: there.ends.map(() => at.end), holes: there.holes, span: at, pinned: at };
}

/** `Object.freeze({ ... })` is its argument: the same constant, frozen. */
export function unfrozen(node: Node | undefined): Node | undefined {
  const n = unwrap(node);
  if (n?.type !== 'CallExpression' || n.arguments.length !== 1) return n;
  const callee = unwrap(n.callee);
  const isFreeze = callee?.type === 'MemberExpression' && !callee.computed && callee.object.type === 'Identifier' && callee.object.name === 'Object' && callee.property.type === 'Identifier' && callee.property.name === 'freeze';
  return isFreeze ? unwrap(n.arguments[0] as Node) : n;
}

/** The initializer a name or `CONST.member` stands for: a const of the file, a property of a const object literal, or an enum member's. */
export function constantInit(n: Node, ctx: ResolveContext): Node | undefined {
  if (n.type === 'Identifier') return unwrap(ctx.constant(n.name, n));
  if (n.type === 'MemberExpression' && !n.computed && n.property.type === 'Identifier') {
    const object = unwrap(n.object);
    const base = unfrozen(object?.type === 'Identifier' || object?.type === 'MemberExpression' ? constantInit(object, ctx) : undefined);
    return memberInit(base, n.property.name);
  }
  return undefined;
}

/** The initializer of a property of a constant object literal (`{ claim: '...' }`), or of an enum's member. */
export function memberInit(base: Node | undefined, key: string): Node | undefined {
  // A member of an enum of the file or the project (`enum JobState { Running = 'running' }`): its initializer.
  if (base?.type === 'TSEnumDeclaration') {
    const member = base.body.members.find((m) => (m.id.type === 'Identifier' ? m.id.name : m.id.type === 'Literal' ? m.id.value : undefined) === key);
    return member?.initializer ? unwrap(member.initializer as Node) : undefined;
  }
  if (base?.type !== 'ObjectExpression') return undefined;
  for (const p of base.properties) {
    if (p.type === 'Property' && !p.computed && ((p.key.type === 'Identifier' && p.key.name === key) || (p.key.type === 'Literal' && p.key.value === key))) {
      return unwrap(p.value as Node);
    }
  }
  return undefined;
}
