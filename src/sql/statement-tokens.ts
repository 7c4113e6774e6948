// A statement's tokens as the word readings of fact-free.ts and routine-definition.ts see them: words
// (lower-cased), quoted names, literals and punctuation, comments dropped; and the words PostgreSQL
// reserves, which those readings never take as a name.
import { isIdentChar, opensRegion, regionEnd } from './lexer.ts';

export interface Token {
  kind: 'word' | 'quoted' | 'punct' | 'literal';
  /** A word lower-cased; a quoted identifier's name; a punctuation character. */
  text: string;
  /** Where the token starts in the text. */
  start: number;
}

/**
 * Words PostgreSQL never takes as a function's name (its reserved and
 * column-name keywords): before `(` they are syntax (`in (`, `check (`), a
 * type's modifier (`varchar(255)`) or a form of their own (`coalesce(`,
 * `extract(`), never a call of a routine.
 */
export const NOT_FUNCTION_NAMES = new Set([
  // reserved
  'all', 'analyse', 'analyze', 'and', 'any', 'array', 'as', 'asc', 'asymmetric', 'both', 'case', 'cast', 'check', 'collate', 'column',
  'constraint', 'create', 'current_catalog', 'current_date', 'current_role', 'current_time', 'current_timestamp', 'current_user',
  'default', 'deferrable', 'desc', 'distinct', 'do', 'else', 'end', 'except', 'false', 'fetch', 'for', 'foreign', 'from', 'grant',
  'group', 'having', 'in', 'initially', 'intersect', 'into', 'lateral', 'leading', 'limit', 'localtime', 'localtimestamp', 'not',
  'null', 'offset', 'on', 'only', 'or', 'order', 'placing', 'primary', 'references', 'returning', 'select', 'session_user', 'some',
  'symmetric', 'system_user', 'table', 'then', 'to', 'trailing', 'true', 'union', 'unique', 'user', 'using', 'variadic', 'when',
  'where', 'window', 'with',
  // column-name keywords
  'between', 'bigint', 'bit', 'boolean', 'char', 'character', 'coalesce', 'dec', 'decimal', 'exists', 'extract', 'float', 'greatest',
  'grouping', 'inout', 'int', 'integer', 'interval', 'json', 'json_array', 'json_arrayagg', 'json_exists', 'json_object',
  'json_objectagg', 'json_query', 'json_scalar', 'json_serialize', 'json_table', 'json_value', 'least', 'merge_action', 'national',
  'nchar', 'none', 'normalize', 'nullif', 'numeric', 'out', 'overlay', 'position', 'precision', 'real', 'row', 'setof', 'smallint',
  'substring', 'time', 'timestamp', 'treat', 'trim', 'values', 'varchar', 'xmlattributes', 'xmlconcat', 'xmlelement', 'xmlexists',
  'xmlforest', 'xmlnamespaces', 'xmlparse', 'xmlpi', 'xmlroot', 'xmlserialize', 'xmltable',
]);

/** Words that are never a table's or a column's name unquoted (PostgreSQL's type_func_name keywords; the reserved ones are in NOT_FUNCTION_NAMES). */
export const NOT_COLUMN_NAMES = new Set([
  'authorization', 'binary', 'collation', 'concurrently', 'cross', 'current_schema', 'freeze', 'full', 'ilike', 'inner', 'is', 'isnull',
  'join', 'left', 'like', 'natural', 'notnull', 'outer', 'overlaps', 'right', 'similar', 'tablesample', 'verbose',
]);

/** Where the last tokensOf stopped: past its last token (and the spaces and comments after it, when it read to the end). */
let tokensEnd = 0;

/** The text's tokens: words, quoted identifiers, literals (strings, dollar-quoted bodies, numbers, $N) and punctuation; comments dropped. */
export function tokensOf(text: string, start: number, end: number, max = Infinity): Token[] {
  const tokens: Token[] = [];
  let i = start;
  let skipped: number;
  while (i < end && tokens.length < max) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12) {
      i++;
    } else if (opensRegion(c) && (skipped = regionEnd(text, i, end)) >= 0) {
      // A string or dollar-quoted body is one literal, a quoted name its text; a comment is nothing.
      if (c === 39 /* ' */ || c === 36 /* $ */) tokens.push({ kind: 'literal', text: c === 39 ? "'" : '$', start: i });
      else if (c === 34 /* " */) tokens.push({ kind: 'quoted', text: text.slice(i + 1, skipped - 1).replace(/""/g, '"'), start: i });
      i = skipped;
    } else if (c === 36 /* $ */ && !isIdentChar(text.charCodeAt(i - 1))) {
      // $1: a parameter, a literal.
      const from = i;
      i++;
      while (i < end && isIdentChar(text.charCodeAt(i))) i++;
      tokens.push({ kind: 'literal', text: '$', start: from });
    } else if ((c >= 48 && c <= 57) || (c === 46 /* . */ && text.charCodeAt(i + 1) >= 48 && text.charCodeAt(i + 1) <= 57)) {
      const from = i;
      i++;
      while (i < end && (isIdentChar(text.charCodeAt(i)) || text.charCodeAt(i) === 46)) i++;
      tokens.push({ kind: 'literal', text: '0', start: from });
    } else if (isIdentChar(c)) {
      const from = i;
      while (i < end && isIdentChar(text.charCodeAt(i))) i++;
      tokens.push({ kind: 'word', text: text.slice(from, i).toLowerCase(), start: from });
    } else {
      tokens.push({ kind: 'punct', text: text[i], start: i });
      i++;
    }
  }
  tokensEnd = i;
  return tokens;
}

export const isName = (token: Token | undefined): boolean => token?.kind === 'word' || token?.kind === 'quoted';

export const wordAt = (tokens: readonly Token[], n: number): string | undefined => (tokens[n]?.kind === 'word' ? tokens[n].text : undefined);

/**
 * A statement's tokens, read once and only as far as asked: its head settles most statements, and the
 * fact-free test and the CREATE TABLE reading share one full reading.
 */
export class StatementTokens {
  private head?: Token[];
  /** How many tokens `head` was read for, and where its reading stopped. */
  private headMax = 0;
  private headEnd = 0;
  private all?: Token[];
  constructor(
    readonly text: string,
    readonly start: number,
    readonly end: number,
  ) {}

  /** The first `n` tokens (all of them when the statement has fewer). */
  first(n: number): readonly Token[] {
    let tokens = this.all ?? this.head;
    // A head shorter than it was asked for is the whole statement.
    if (!tokens || (tokens === this.head && tokens.length < n && tokens.length === this.headMax)) {
      this.headMax = n;
      tokens = this.head = tokensOf(this.text, this.start, this.end, n);
      this.headEnd = tokensEnd;
    }
    return tokens.length > n ? tokens.slice(0, n) : tokens;
  }

  whole(): readonly Token[] {
    if (this.all) return this.all;
    const head = this.head;
    // The head read already, and the rest from where it stopped (a head shorter than asked for is all of them).
    if (!head) return (this.all = tokensOf(this.text, this.start, this.end));
    if (head.length < this.headMax) return (this.all = head);
    const rest = tokensOf(this.text, this.headEnd, this.end);
    return (this.all = rest.length === 0 ? head : head.concat(rest));
  }
}
