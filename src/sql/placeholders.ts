// Host placeholders are not SQL: psycopg's %s and %(name)s, knex's ? and ??,
// psycopg.sql's {} and template interpolations. They are rewritten to $N
// parameters (or, where a parameter cannot stand, an identifier) before
// parsing, and offsets are mapped back to the text the user wrote.
import { forEachCodeChar, isIdentChar } from './lexer.ts';
import type { Span } from './facts.ts';

export type PlaceholderStyle = 'dollar' | 'psycopg' | 'qmark';

interface Edit {
  start: number;
  end: number;
  /** What the placeholder becomes when it stands for a value, and for a name. */
  asValue: string;
  asIdentifier: string;
  identifier: boolean;
}

export interface NormalizedSql {
  sql: string;
  /** Maps an offset in `sql` back to the original text. */
  toOriginal(offset: number): number;
  /** Re-renders with the placeholder nearest `originalOffset` as an identifier; false if none is there. */
  retryAsIdentifier(originalOffset: number): boolean;
}

export function normalizePlaceholders(text: string, style: PlaceholderStyle, holes: readonly Span[] = []): NormalizedSql {
  const edits = findPlaceholders(text, style);
  let next = 1 + maxDollarParam(text);
  for (const hole of holes) edits.push(makeEdit(hole.start, hole.end, next++, false));
  edits.sort((a, b) => a.start - b.start);
  // Native $N parameters can stand in identifier position too: give them a way out.
  forEachCodeChar(text, (i) => {
    if (text.charCodeAt(i) !== 36 || isIdentChar(text.charCodeAt(i - 1))) return;
    let j = i + 1;
    while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
    if (j === i + 1 || edits.some((e) => e.start <= i && i < e.end)) return j;
    edits.push({ start: i, end: j, asValue: text.slice(i, j), asIdentifier: `pgq_param_${text.slice(i + 1, j)}`, identifier: false });
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
      out += edit.identifier ? edit.asIdentifier : edit.asValue;
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
      let delta = 0;
      for (let k = 0; k < edits.length; k++) {
        const edit = edits[k];
        const newStart = state.starts[k];
        const newLength = (edit.identifier ? edit.asIdentifier : edit.asValue).length;
        if (offset < newStart) break;
        if (offset < newStart + newLength) return edit.start;
        delta = edit.end - (newStart + newLength);
      }
      return offset + delta;
    },
    retryAsIdentifier(originalOffset) {
      let best: Edit | undefined;
      for (const edit of edits) {
        if (edit.identifier) continue;
        if (edit.start <= originalOffset + 1 && (!best || edit.start > best.start)) best = edit;
      }
      if (!best || originalOffset - best.end > 64) return false;
      best.identifier = true;
      render();
      return true;
    },
  };
  return normalized;
}

function makeEdit(start: number, end: number, n: number, identifier: boolean): Edit {
  return { start, end, asValue: `$${n}`, asIdentifier: `pgq_param_${n}`, identifier };
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
