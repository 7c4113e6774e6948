// Host placeholders numbered as $N in the text given to the analyzer, and
// the values the code binds to them (SqlSite.params): psycopg's %s and
// %(name)s and psycopg.sql's {} fields, SQLAlchemy text()'s :name, asyncpg's
// native $N. Numbering here (rather than in the analyzer) keeps params[i]
// and $i+1 the same placeholder, whatever holes the text has.
import type { HostParam } from '../../../model/index.ts';
import type { StatementFacts } from '../../../sql/index.ts';
import { forEachCodeChar } from '../../../sql/lexer.ts';
import { HostTextBuilder } from '../../host-text.ts';
import type { HostText } from './strings.ts';
import { children, unwrap, type Node } from '../syntax.ts';

/** The DB-API's pyformat (%s, %(name)s: psycopg, psycopg2, Django), SQLAlchemy text()'s :name, asyncpg's native $N. */
export type PlaceholderStyle = 'pyformat' | 'colon' | 'dollar';

/** What $N (refs[N-1]) stands for in the host code. */
export type PlaceholderRef =
  | { kind: 'positional'; index: number }
  | { kind: 'named'; name: string }
  /** A psycopg.sql `{}` field whose argument could not be read as text. */
  | { kind: 'format'; arg?: Node };

export interface NumberedText {
  host: HostText;
  refs: PlaceholderRef[];
}

/** Rewrites the host placeholders of `host` to $1, $2, ... (a repeated name keeps its number); holes stay holes. */
export function numberPlaceholders(host: HostText, style: PlaceholderStyle): NumberedText {
  const refs: PlaceholderRef[] = [];
  if (style === 'dollar') {
    for (const match of host.text.matchAll(/\$(\d+)/g)) {
      const n = Number(match[1]);
      while (refs.length < n && n <= 100) refs.push({ kind: 'positional', index: refs.length });
    }
    return { host, refs };
  }
  const text = host.text;
  // Every placeholder (and `%%`) starts with one of these: a text without any has nothing to number, unread.
  if (style === 'colon' ? !text.includes(':') : !text.includes('%') && !text.includes('{')) return { host, refs };
  const edits: { start: number; end: number; replacement: string }[] = [];
  const named = new Map<string, number>();
  let positional = 0;
  const add = (start: number, end: number, ref: PlaceholderRef, name?: string) => {
    let n = name !== undefined ? named.get(name) : undefined;
    if (n === undefined) {
      refs.push(ref);
      n = refs.length;
      if (name !== undefined) named.set(name, n);
    }
    edits.push({ start, end, replacement: `$${n}` });
  };
  forEachCodeChar(text, (i) => {
    const c = text[i];
    if (style === 'colon') {
      if (c !== ':' || text[i - 1] === ':' || text[i - 1] === '\\' || /\w/.test(text[i - 1] ?? '')) return;
      const match = /^[A-Za-z_]\w*/.exec(text.slice(i + 1, i + 65));
      if (!match || text[i + 1 + match[0].length] === ':') return;
      add(i, i + 1 + match[0].length, { kind: 'named', name: match[0] }, match[0]);
      return i + 1 + match[0].length;
    }
    if (c === '%' && text[i + 1] === '%') {
      edits.push({ start: i, end: i + 2, replacement: '%' });
      return i + 2;
    }
    if (c === '%' && 'sbt'.includes(text[i + 1] ?? '') && text[i + 1] !== undefined) {
      add(i, i + 2, { kind: 'positional', index: positional++ });
      return i + 2;
    }
    if (c === '%' && text[i + 1] === '(') {
      const close = text.indexOf(')', i + 2);
      const name = close > 0 ? text.slice(i + 2, close) : '';
      if (/^[A-Za-z_]\w*$/.test(name) && 'sbt'.includes(text[close + 1] ?? '') && text[close + 1] !== undefined) {
        add(i, close + 2, { kind: 'named', name }, name);
        return close + 2;
      }
    }
    // psycopg.sql's {} fields compose names as often as values.
    if (c === '{') {
      const close = text.indexOf('}', i + 1);
      if (close > 0 && /^\w*$/.test(text.slice(i + 1, close))) {
        add(i, close + 1, { kind: 'format', arg: host.formatArgs?.get(i) });
        return close + 1;
      }
    }
  });
  if (edits.length === 0) return { host, refs };
  const out = new HostTextBuilder();
  const holeAt = new Set(host.holes.map((h) => h.start));
  const from = (k: number) => host.pinned?.start ?? host.starts[k];
  const to = (k: number) => host.pinned?.end ?? host.ends[k];
  /** The units [a, b) as they are, each at its own host range: the text in one piece, not a unit at a time. */
  const pinned = host.pinned;
  const flush = (a: number, b: number) => {
    out.text += text.slice(a, b);
    for (let m = a; m < b; m++) {
      out.starts.push(pinned ? pinned.start : host.starts[m]);
      out.ends.push(pinned ? pinned.end : host.ends[m]);
    }
  };
  /** The units [k, end): runs of text, and each hole a hole. */
  const copyRange = (k: number, end: number) => {
    if (holeAt.size === 0) return flush(k, end);
    let run = k;
    for (; k < end; k++) {
      if (!holeAt.has(k)) continue;
      flush(run, k);
      out.hole(from(k), to(k));
      run = k + 1;
    }
    flush(run, end);
  };
  let k = 0;
  for (const edit of edits) {
    copyRange(k, edit.start);
    out.push(edit.replacement, from(edit.start), to(edit.end - 1));
    k = edit.end;
  }
  copyRange(k, text.length);
  return { host: { ...host, ...out.done(host.span) }, refs };
}

/** The values given with the SQL: a sequence (positional), a mapping (named), or several arguments (asyncpg). */
export interface BoundValues {
  sequence?: Node[];
  mapping?: Map<string, Node>;
  /** The values exist but cannot be read (a name, a call). */
  opaque?: boolean;
}

/** `[a, b]`, `(a, b)`, `{"k": v}`, `dict(k=v)`; a name assigned once in the function is followed by `valueOf`. */
export function boundValues(node: Node | undefined, text: string, valueOf: (node: Node) => Node | undefined, depth = 0): BoundValues | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  if (depth > 3) return { opaque: true };
  if (expr.name === 'VariableName') {
    const value = valueOf(expr);
    return value ? boundValues(value, text, valueOf, depth + 1) : { opaque: true };
  }
  if (expr.name === 'ArrayExpression' || expr.name === 'TupleExpression' || (expr.name === 'ParenthesizedExpression' && children(expr).some((c) => c.name === ','))) {
    const items = children(expr).filter((c) => !['[', ']', '(', ')', ','].includes(c.name));
    if (items.some((c) => c.name === '*' || c.name === 'ArrayComprehensionExpression')) return { opaque: true };
    return { sequence: items };
  }
  if (expr.name === 'DictionaryExpression') {
    const mapping = new Map<string, Node>();
    const parts = children(expr).filter((c) => c.name !== '{' && c.name !== '}');
    for (let i = 0; i < parts.length; i++) {
      if (parts[i].name === '**') return { opaque: true };
      if (parts[i].name === ',') continue;
      const key = /^['"](\w+)['"]$/.exec(text.slice(parts[i].from, parts[i].to));
      if (!key || parts[i + 1]?.name !== ':' || !parts[i + 2]) return { opaque: true };
      mapping.set(key[1], parts[i + 2]);
      i += 2;
    }
    return { mapping };
  }
  if (expr.name === 'CallExpression' && text.slice(expr.from, expr.from + 5) === 'dict(') {
    const args = expr.lastChild;
    const mapping = new Map<string, Node>();
    if (!args) return { opaque: true };
    const parts = children(args).filter((c) => !['(', ')'].includes(c.name));
    for (let i = 0; i < parts.length; i++) {
      if (parts[i].name === ',') continue;
      if (parts[i].name !== 'VariableName' || parts[i + 1]?.name !== 'AssignOp' || !parts[i + 2]) return { opaque: true };
      mapping.set(text.slice(parts[i].from, parts[i].to), parts[i + 2]);
      i += 2;
    }
    return { mapping };
  }
  return { opaque: true };
}

/**
 * One value as a HostParam: a literal, a parameter of the enclosing
 * function (also through str()/int()/sql.Identifier()/sql.Literal()), or
 * unknown.
 */
export function hostParam(node: Node | undefined, text: string, isParameter: (name: string) => boolean, valueOf: (node: Node) => Node | undefined, depth = 0): HostParam {
  const expr = unwrap(node);
  if (!expr || depth > 4) return { kind: 'unknown' };
  const raw = text.slice(expr.from, expr.to);
  switch (expr.name) {
    case 'String': {
      const match = /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(raw);
      return match ? { kind: 'literal', value: match[2] } : { kind: 'unknown' };
    }
    case 'Number':
      return /^-?\d+(\.\d+)?$/.test(raw) ? { kind: 'literal', value: Number(raw) } : { kind: 'unknown' };
    case 'Boolean':
      return { kind: 'literal', value: raw === 'True' };
    case 'None':
      return { kind: 'literal', value: null };
    case 'VariableName': {
      if (raw === 'True' || raw === 'False') return { kind: 'literal', value: raw === 'True' };
      if (isParameter(raw)) return { kind: 'caller-parameter', name: raw };
      const value = valueOf(expr);
      return value ? hostParam(value, text, isParameter, valueOf, depth + 1) : { kind: 'unknown' };
    }
    case 'CallExpression': {
      // str(tenant_id), sql.Identifier(name), sql.Literal(value): the value is the argument's.
      const callee = expr.firstChild;
      const args = expr.lastChild;
      const calleeText = callee ? text.slice(callee.from, callee.to) : '';
      if (!args || args.name !== 'ArgList' || !/(^|\.)(str|int|Identifier|Literal)$/.test(calleeText)) return { kind: 'unknown' };
      const inner = children(args).filter((c) => !['(', ')', ','].includes(c.name));
      if (inner.length !== 1) return { kind: 'unknown' };
      const value = hostParam(inner[0], text, isParameter, valueOf, depth + 1);
      if (value.kind === 'literal' && /(^|\.)int$/.test(calleeText)) return { kind: 'unknown' };
      return value;
    }
    default:
      return { kind: 'unknown' };
  }
}

/** params[i] for $i+1, from the values bound with the call and the `{}` arguments of a composed template. */
export function paramsOf(refs: PlaceholderRef[], bound: BoundValues | undefined, value: (node: Node | undefined) => HostParam): HostParam[] | undefined {
  if (refs.length === 0) return undefined;
  return refs.map((ref) => {
    if (ref.kind === 'format') return ref.arg ? value(ref.arg) : { kind: 'unknown' };
    if (!bound || bound.opaque) return { kind: 'unknown' };
    if (ref.kind === 'positional') return bound.sequence && ref.index < bound.sequence.length ? value(bound.sequence[ref.index]) : { kind: 'unknown' };
    return bound.mapping?.has(ref.name) ? value(bound.mapping.get(ref.name)) : { kind: 'unknown' };
  });
}

/**
 * set_config($N, ...) whose name is a placeholder: which one (nameFrom, where
 * the analyzer did not say), and the name itself where the code binds a
 * literal (`cur.execute("select set_config(%s, %s, false)", ("app.tenant", t))`).
 */
export function resolveSettingNames(statements: StatementFacts[], host: HostText, params: HostParam[] | undefined): void {
  for (const statement of statements) {
    for (const write of statement.settingWrites) {
      // SET {} = ...: the analyzer read the placeholder as a name it made up.
      const madeUp = write.via === 'set' ? /^pgq_param_(\d+)$/.exec(write.name ?? '') : null;
      if (madeUp) {
        write.name = undefined;
        write.nameFrom = { kind: 'placeholder', index: Number(madeUp[1]) };
      }
      if ((write.via !== 'set_config' && write.via !== 'set') || write.name !== undefined) continue;
      let index = write.nameFrom?.kind === 'placeholder' ? write.nameFrom.index : undefined;
      if (index === undefined && write.via === 'set') {
        // SET $N = ...: psycopg.sql's SET {} = {} with a name the code computes.
        const at = host.starts.findIndex((start) => start >= write.span.start);
        const match = at >= 0 ? /^SET\s+(?:SESSION\s+|LOCAL\s+)?\$(\d+)/i.exec(host.text.slice(at, at + 40)) : null;
        if (!match) continue;
        index = Number(match[1]);
        write.nameFrom = { kind: 'placeholder', index };
      }
      if (index === undefined) {
        let i = host.starts.findIndex((start, k) => start >= write.span.end && !host.holes.some((h) => h.start === k));
        if (i < 0) continue;
        while (i < host.text.length && /[\s(]/.test(host.text[i])) i++;
        const match = /^\$(\d+)/.exec(host.text.slice(i, i + 6));
        if (!match) continue;
        index = Number(match[1]);
        write.nameFrom = { kind: 'placeholder', index };
      }
      const value = params?.[index - 1];
      if (value?.kind === 'literal' && typeof value.value === 'string' && /^[\w.]+$/.test(value.value)) write.name = value.value.toLowerCase();
    }
  }
}
