// Host placeholders are not SQL: psycopg's %s and %(name)s, knex's ? and ??,
// named :name (Sequelize's replacements, Knex's named bindings, :name: a name),
// psycopg.sql's {} and template interpolations. They are rewritten to $N
// parameters (or, where a parameter cannot stand, an identifier) before
// parsing, and offsets are mapped back to the text the user wrote.
import { forEachCodeChar, isIdentChar } from './lexer.ts';
import type { Span } from './facts.ts';

/** `colon`: `:name` bound from an object (Sequelize's replacements, Knex's named bindings); `:name:` is a name. */
export type PlaceholderStyle = 'dollar' | 'psycopg' | 'qmark' | 'colon';

/** A span of the text that is not SQL but stands for a value or a name (a template interpolation, a psql variable). */
export interface Hole extends Span {
  /** The text the hole stands for, when it is known (psql's `:name` after `\set name value`). */
  text?: string;
  /** The hole is a name, not a value (format's `%I`, psql's `:"name"`). */
  identifier?: boolean;
  /** How the hole reads as a name: a quoted identifier that says what fills it. Default `pgq_param_N`. */
  identifierText?: string;
  /**
   * The hole may stand for a piece of SQL, or nothing: a template's `{where}`
   * or `{filters}` adds an optional clause. Read as empty when neither a value
   * nor a name nor a list parses.
   */
  fragment?: boolean;
  /**
   * How the hole reads as a string literal, tried after a name and a list: psql puts a variable's text in where it
   * stands, a library path where a string goes (`AS :MODULE_PATHNAME, 'symbol' LANGUAGE C`).
   */
  stringText?: string;
  /**
   * Its text is not in the file and may be any SQL (a variable the psql runner passes with `-v`, holding a whole
   * query or a clause): a statement it stands in that parses in none of its readings is not reported.
   */
  opaque?: boolean;
}

interface Edit {
  start: number;
  end: number;
  /** What the placeholder becomes when it stands for a value, and for a name. */
  asValue: string;
  asIdentifier: string;
  /**
   * How it is rendered now: 0 as a value, 1 as a name, 2 as a parenthesised
   * list (`IN :ids`, `VALUES :rows` of pgtyped and yesql), 4 as a string
   * literal (a hole with `stringText` only), 3 as nothing (a fragment hole
   * only). The parser's error moves a placeholder to the next one.
   */
  stage: 0 | 1 | 2 | 3 | 4;
  /** May be rendered as nothing (stage 3). */
  fragment?: boolean;
  /** May be rendered as this string literal (stage 4). */
  asString?: string;
  /** A known text: rendered as it is, never retried. */
  fixed?: boolean;
}

function rendered(edit: Edit): string {
  return edit.stage === 0 ? edit.asValue : edit.stage === 1 ? edit.asIdentifier : edit.stage === 2 ? `(${edit.asValue})` : edit.stage === 4 ? (edit.asString ?? '') : '';
}

/** The stage an edit is re-rendered in after the parser stopped at it, or none: value, name, list, string, nothing. */
function nextStage(edit: Edit): Edit['stage'] | undefined {
  if (edit.fixed || edit.stage === 3) return undefined;
  if (edit.stage === 0) return 1;
  if (edit.stage === 1) return 2;
  if (edit.stage === 2 && edit.asString !== undefined) return 4;
  return edit.fragment ? 3 : undefined;
}

export interface NormalizedSql {
  sql: string;
  /** Maps an offset in `sql` back to the original text. */
  toOriginal(offset: number): number;
  /** Re-renders the placeholder nearest before `originalOffset` as a name (then as a list, a string where it may be one, then a fragment as nothing); false if none is there. */
  retryAsIdentifier(originalOffset: number): boolean;
}

export function normalizePlaceholders(text: string, style: PlaceholderStyle, holes: readonly Hole[] = []): NormalizedSql {
  const edits = findPlaceholders(text, style);
  let next = 1 + maxDollarParam(text);
  for (const hole of holes) {
    if (hole.text !== undefined) {
      edits.push({ start: hole.start, end: hole.end, asValue: hole.text, asIdentifier: hole.text, stage: 1, fixed: true });
      continue;
    }
    const edit = makeEdit(hole.start, hole.end, next++, hole.identifier === true);
    if (hole.identifierText) edit.asIdentifier = hole.identifierText;
    if (hole.fragment) edit.fragment = true;
    if (hole.stringText !== undefined) edit.asString = hole.stringText;
    edits.push(edit);
  }
  edits.sort((a, b) => a.start - b.start);
  const inEdit = covering(edits);
  // Native $N parameters can stand in identifier position too: give them a way out. (Most texts with `$` have only dollar quotes.)
  if (/\$\d/.test(text)) forEachCodeChar(text, (i) => {
    if (text.charCodeAt(i) !== 36 || isIdentChar(text.charCodeAt(i - 1))) return;
    let j = i + 1;
    while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
    if (j === i + 1 || inEdit(i)) return j;
    edits.push({ start: i, end: j, asValue: text.slice(i, j), asIdentifier: `pgq_param_${text.slice(i + 1, j)}`, stage: 0 });
    return j;
  });
  edits.sort((a, b) => a.start - b.start);

  const state = { sql: '', starts: [] as number[] };
  const render = () => {
    let out = '';
    let last = 0;
    state.starts = [];
    for (const edit of edits) {
      out += text.slice(last, edit.start);
      state.starts.push(out.length);
      out += rendered(edit);
      last = edit.end;
    }
    state.sql = out + text.slice(last);
  };
  render();

  const normalized: NormalizedSql = {
    get sql() {
      return state.sql;
    },
    toOriginal(offset) {
      // The last edit that starts at or before `offset` in the rendered text (binary search).
      let lo = 0;
      let hi = edits.length - 1;
      let k = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (state.starts[mid] <= offset) {
          k = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (k < 0) return offset;
      const edit = edits[k];
      const newEnd = state.starts[k] + rendered(edit).length;
      if (offset < newEnd) return edit.start;
      return offset + edit.end - newEnd;
    },
    retryAsIdentifier(originalOffset) {
      let best: Edit | undefined;
      for (const edit of edits) {
        if (nextStage(edit) === undefined) continue;
        if (edit.start <= originalOffset + 1 && (!best || edit.start > best.start)) best = edit;
      }
      if (!best || originalOffset - best.end > 64) return false;
      best.stage = nextStage(best)!;
      render();
      return true;
    },
  };
  return normalized;
}

/** Whether an offset falls in one of the (sorted, disjoint) edits: a binary search, not a scan per `$`. */
function covering(edits: readonly Edit[]): (offset: number) => boolean {
  return (offset) => {
    let lo = 0;
    let hi = edits.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (edits[mid].end <= offset) lo = mid + 1;
      else if (edits[mid].start > offset) hi = mid - 1;
      else return true;
    }
    return false;
  };
}

function makeEdit(start: number, end: number, n: number, identifier: boolean): Edit {
  return { start, end, asValue: `$${n}`, asIdentifier: `pgq_param_${n}`, stage: identifier ? 1 : 0 };
}

function maxDollarParam(text: string): number {
  let max = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(match[1]));
  return max;
}

function findPlaceholders(text: string, style: PlaceholderStyle): Edit[] {
  const edits: Edit[] = [];
  if (style === 'dollar') return edits;
  let n = 1 + maxDollarParam(text);
  const named = new Map<string, number>();
  forEachCodeChar(text, (i) => {
    const c = text[i];
    if (style === 'psycopg') {
      if (c === '%' && text[i + 1] === '%') return i + 2; // literal percent
      if (c === '%' && (text[i + 1] === 's' || text[i + 1] === 'b' || text[i + 1] === 't')) {
        edits.push(makeEdit(i, i + 2, n++, false));
        return i + 2;
      }
      if (c === '%' && text[i + 1] === '(') {
        const close = text.indexOf(')', i + 2);
        if (close > 0 && /^[A-Za-z_]\w*$/.test(text.slice(i + 2, close)) && 'sbt'.includes(text[close + 1] ?? '')) {
          edits.push(makeEdit(i, close + 2, n++, false));
          return close + 2;
        }
      }
      // psycopg.sql.SQL("... {} ...").format(...) composes names as often as values.
      if (c === '{') {
        const close = text.indexOf('}', i + 1);
        if (close > 0 && /^\w*$/.test(text.slice(i + 1, close))) {
          edits.push(makeEdit(i, close + 1, n++, false));
          return close + 1;
        }
      }
    } else if (style === 'colon' && c === ':') {
      // Not a cast (::type), an assignment (:=), a slice bound (a[1:n]) or a word's inner colon.
      const before = text[i - 1] ?? '';
      if (before === ':' || before === '\\' || /\w/.test(before)) return;
      const match = /^[A-Za-z_]\w*/.exec(text.slice(i + 1, i + 65));
      if (!match) return;
      const end = i + 1 + match[0].length;
      const identifier = text[end] === ':' && text[end + 1] !== ':';
      let number = named.get(match[0]);
      if (number === undefined) named.set(match[0], (number = n++));
      edits.push(makeEdit(i, identifier ? end + 1 : end, number, identifier));
      return identifier ? end + 1 : end;
    } else if (style === 'qmark' && c === '?') {
      // jsonb operators ?| ?& and `a ? b` after an operand are not bindings; knex writes ?? for names.
      if (text[i + 1] === '?') {
        edits.push(makeEdit(i, i + 2, n++, true));
        return i + 2;
      }
      if (text[i + 1] === '|' || text[i + 1] === '&') return i + 2;
      edits.push(makeEdit(i, i + 1, n++, false));
      return i + 1;
    }
  });
  return edits;
}
