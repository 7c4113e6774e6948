// Statements that carry no fact, told from their words before any parse. A
// migration is mostly DDL no rule reads (CREATE INDEX, ADD CONSTRAINT, GRANT,
// COMMENT, a trigger function that stamps updated_at), and parsing is the
// cost of reading it: the .sql front end parses only the statements whose
// text can carry a fact (extract.ts and routines.ts say which), and leaves
// the others unparsed.
//
// A statement is left out only when it is of a kind extract.ts reads nothing
// of (its first words say which), and none of its expressions can hold what
// the walk of extract.ts collects: a call of set_config, current_setting or
// any routine that is not a built-in (a routine call is a fact), a subquery
// (it may lock rows), ROW LEVEL SECURITY, SET NOT NULL. Anything not known
// here is parsed. A routine body is left unparsed when it has no statement
// word and no call a rule reads.
import { blockCommentEnd, isIdentChar, opensRegion, regionEnd } from './lexer.ts';
import type { Hole } from './placeholders.ts';
import { routineDefinedBy, type RoutineDefinition } from './routine-definition.ts';
import { isName, NOT_COLUMN_NAMES, NOT_FUNCTION_NAMES, StatementTokens, tokensOf, wordAt, type Token } from './statement-tokens.ts';
import { isBuiltInName } from './values.ts';

/** Statements that can carry no fact whatever their words: CREATE, ALTER and the rest are decided by their object. */
const FACT_FREE_HEADS = new Set([
  'comment', 'grant', 'revoke', 'drop', 'truncate', 'lock', 'analyze', 'analyse', 'vacuum', 'reindex', 'cluster', 'refresh',
  'notify', 'listen', 'unlisten', 'security', 'checkpoint', 'load', 'reassign', 'import', 'copy',
]);

/** CREATE [OR REPLACE] [modifiers] <object>: objects whose statement extract.ts reads nothing of (TABLE, VIEW, RULE, POLICY, FUNCTION ... are read). */
const FACT_FREE_CREATE = new Set([
  'index', 'trigger', 'type', 'domain', 'sequence', 'extension', 'schema', 'collation', 'cast', 'aggregate', 'operator', 'role', 'user',
  'group', 'database', 'tablespace', 'publication', 'subscription', 'server', 'event', 'statistics', 'text', 'conversion', 'language',
  'access', 'transform',
]);
const CREATE_MODIFIERS = new Set(['temp', 'temporary', 'unlogged', 'global', 'local', 'unique', 'constraint', 'trusted', 'procedural', 'default']);

/** ALTER <object>: ALTER ROLE / USER / DATABASE / SYSTEM (settings stored for new sessions) and ALTER POLICY are read. */
const FACT_FREE_ALTER = new Set([
  'table', 'index', 'sequence', 'type', 'domain', 'schema', 'extension', 'function', 'procedure', 'routine', 'aggregate', 'view',
  'materialized', 'trigger', 'publication', 'subscription', 'default', 'event', 'foreign', 'server', 'collation', 'operator', 'text',
  'statistics', 'large', 'language', 'tablespace', 'conversion',
]);

/** PL/pgSQL's own words that stand before `(` in a body: `if (`, `return (`. */
const PLPGSQL_SYNTAX = new Set(['if', 'elsif', 'elseif', 'while', 'return', 'exit', 'continue', 'raise', 'assert', 'perform', 'foreach']);

/** Words after which a name followed by `(` names an object, not a call: `on jobs (`, `references users (`, `function f(int)`. */
const NAME_AFTER = new Set(['on', 'only', 'references', 'function', 'procedure', 'routine', 'aggregate', 'exists', 'copy', 'type', 'table']);
/** Index access methods: `using gin (`. */
const ACCESS_METHODS = new Set(['btree', 'hash', 'gist', 'spgist', 'gin', 'brin', 'bloom', 'rum', 'hnsw', 'ivfflat']);

/** Statement words in a routine body: the statements a rule reads (a setting, a row write or lock, transaction control, dynamic SQL). */
const BODY_STATEMENT_WORDS = new Set(['set', 'reset', 'discard', 'deallocate', 'commit', 'rollback', 'call', 'select', 'insert', 'update', 'delete', 'merge', 'execute']);

/** Whether the word at `at` may start a statement that carries no fact (a quick look before the tokens). */
function mayBeFactFree(text: string, at: number): boolean {
  let j = at;
  while (j < text.length && j - at < 12 && isIdentChar(text.charCodeAt(j))) j++;
  const word = text.slice(at, j).toLowerCase();
  return word === 'create' || word === 'alter' || FACT_FREE_HEADS.has(word);
}

/** Whether a top-level statement, text[start, end), can carry no fact: no rule reads anything a parse of it would give. */
export function statementCarriesNoFact(text: string, start = 0, end = text.length): boolean {
  return carriesNoFact(new StatementTokens(text, start, end));
}

function carriesNoFact(statement: StatementTokens): boolean {
  const head = statement.first(8);
  const first = wordAt(head, 0);
  if (!first) return false;
  let at = 1;
  let eligible = FACT_FREE_HEADS.has(first);
  if (first === 'create') {
    if (wordAt(head, 1) === 'or' && wordAt(head, 2) === 'replace') at = 3;
    while (CREATE_MODIFIERS.has(wordAt(head, at) ?? '')) at++;
    eligible = FACT_FREE_CREATE.has(wordAt(head, at) ?? '');
  } else if (first === 'alter') {
    eligible = FACT_FREE_ALTER.has(wordAt(head, 1) ?? '');
  }
  if (!eligible) return false;
  const tokens = statement.whole();
  // CREATE SCHEMA s CREATE TABLE ...: its elements are statements of their own.
  if (first === 'create' && wordAt(tokens, at) === 'schema' && tokens.some((t, n) => n > at && t.kind === 'word' && t.text === 'create')) return false;
  return !mayCarryFact(tokens, 'statement');
}

/** Whether a routine's body (PL/pgSQL or SQL) runs nothing a rule reads: no statement it would read, no call of a routine, no setting. */
export function bodyCarriesNoFact(body: string): boolean {
  return !mayCarryFact(tokensOf(body, 0, body.length), 'body');
}

function mayCarryFact(tokens: readonly Token[], mode: 'statement' | 'body'): boolean {
  let depth = 0;
  for (let n = 0; n < tokens.length; n++) {
    const token = tokens[n];
    if (token.kind === 'punct') {
      if (token.text === '(') {
        depth++;
        const next = wordAt(tokens, n + 1);
        // A subquery: it may lock rows, write them, call anything.
        if (next === 'select' || next === 'with' || next === 'values' || next === 'table') return true;
        if (callAt(tokens, n, mode)) return true;
      } else if (token.text === ')') {
        if (--depth < 0) return true;
      } else if (token.text === ';' && mode === 'statement' && tokens.slice(n + 1).some((t) => t.text !== ';')) {
        return true;
      } else if (token.text === '{' || token.text === '}' || token.text === '\\') {
        // Not PostgreSQL as written (a template's {{ ... }}, a placeholder): the parser says what it is.
        return true;
      }
    } else if (token.kind === 'quoted' && (token.text.includes('{') || token.text.includes('}'))) {
      return true; // "{{ .Schema }}": a template's, in quotes
    } else if (token.kind === 'word') {
      if (mode === 'body') {
        if (BODY_STATEMENT_WORDS.has(token.text)) return true;
      } else if (token.text === 'security' && wordAt(tokens, n - 1) === 'level') {
        return true; // ENABLE / FORCE / DISABLE / NO FORCE ROW LEVEL SECURITY
      } else if (token.text === 'null' && wordAt(tokens, n - 1) === 'not' && wordAt(tokens, n - 2) === 'set') {
        return true; // ALTER COLUMN ... SET NOT NULL
      }
    }
  }
  // Parentheses that do not close: the statement is not what it seems (or not whole).
  return depth !== 0;
}

/** Whether the `(` at tokens[n] may open a call's arguments that a rule reads: set_config, current_setting, a routine not built in. */
function callAt(tokens: readonly Token[], n: number, mode: 'statement' | 'body'): boolean {
  let j = n - 1;
  const name = tokens[j];
  if (!name || (name.kind !== 'word' && name.kind !== 'quoted')) return false;
  if (name.kind === 'word' && (NOT_FUNCTION_NAMES.has(name.text) || (mode === 'body' && PLPGSQL_SYNTAX.has(name.text)))) return false;
  const parts = [name.text.toLowerCase()];
  while (tokens[j - 1]?.text === '.' && tokens[j - 1].kind === 'punct' && (tokens[j - 2]?.kind === 'word' || tokens[j - 2]?.kind === 'quoted')) {
    parts.unshift(tokens[j - 2].text.toLowerCase());
    j -= 2;
  }
  const last = parts[parts.length - 1];
  if (last === 'set_config' || last === 'current_setting') return true;
  // A statement does not start with a call: `vacuum (verbose)`, `reindex (verbose)`.
  if (mode === 'statement' && (j === 0 || objectName(tokens[j - 1], name))) return false;
  return !isBuiltInName(parts);
}

/** Whether a name followed by `(` right after `before` names an object or a type (`on jobs (`, `as enum (`), not a call. */
function objectName(before: Token | undefined, name: Token): boolean {
  if (!before) return false;
  const b = before.kind === 'word' ? before.text : undefined;
  const word = name.kind === 'word' ? name.text : undefined;
  if (b !== undefined && NAME_AFTER.has(b)) return true;
  if (b === 'using' && word !== undefined && ACCESS_METHODS.has(word)) return true;
  if (b === 'as' && (word === 'enum' || word === 'range' || word === 'identity')) return true;
  if (b === 'by' && (word === 'range' || word === 'list' || word === 'hash')) return true;
  if ((b === 'primary' || b === 'foreign') && word === 'key') return true;
  if ((b === 'character' || b === 'char' || b === 'nchar' || b === 'bit') && word === 'varying') return true;
  return before.kind === 'punct' && before.text === ')' && word === 'include';
}

/** The first word of a table element that is not a column: a table constraint or LIKE (EXCLUDE may also be a column's name: parsed). */
const TABLE_CONSTRAINT_WORDS = new Set(['constraint', 'primary', 'unique', 'check', 'foreign', 'like']);

/**
 * Words a column definition may have after its type, and a table constraint at all, in PostgreSQL's grammar
 * (the type's own continuations, the constraints, their options): an element with another word at its top
 * level (SQLite's AUTOINCREMENT, MySQL's UNSIGNED, COMMENT, ON UPDATE CURRENT_TIMESTAMP) is left to the
 * parser, which says the file is not PostgreSQL, as it did before CREATE TABLE was read from its words.
 */
const ELEMENT_WORDS = new Set([
  'with', 'without', 'time', 'zone', 'varying', 'precision', 'array', 'year', 'month', 'day', 'hour', 'minute', 'second', 'to',
  'not', 'null', 'default', 'primary', 'key', 'unique', 'references', 'on', 'delete', 'update', 'cascade', 'restrict', 'set', 'no',
  'action', 'check', 'collate', 'constraint', 'generated', 'always', 'by', 'as', 'stored', 'deferrable', 'initially', 'deferred',
  'immediate', 'match', 'full', 'simple', 'partial', 'nulls', 'distinct', 'include', 'using', 'index', 'tablespace', 'foreign', 'like',
  'including', 'excluding', 'all', 'defaults', 'constraints', 'indexes', 'comments', 'statistics', 'storage', 'compression', 'plain',
  'external', 'extended', 'main', 'inherit', 'enforced', 'identity',
]);
/** Words after which one name follows (a table, a collation, a constraint's name): any name. */
const NAME_FOLLOWS = new Set(['references', 'collate', 'constraint', 'like', 'tablespace', 'compression']);
/** Words that end a DEFAULT's expression (the next constraint); ON for MySQL's ON UPDATE, which PostgreSQL's has not. */
const DEFAULT_ENDS = new Set(['not', 'null', 'primary', 'unique', 'references', 'check', 'collate', 'constraint', 'generated', 'on']);

/** Whether the top level of tokens[from, to) (a column after its name and type's first word, or a table constraint) is PostgreSQL's. */
function postgresElement(tokens: readonly Token[], from: number, to: number): boolean {
  let depth = 0;
  let nameNext = false;
  let previous: string | undefined;
  // In a DEFAULT's expression: whether an operand was read (then only an operator or the next constraint may
  // follow), whether the words are a cast's type (`::character varying`), whether the operand is one word.
  let inDefault = false;
  let operand = false;
  let castType = false;
  let typeWord = false;
  for (let i = from; i < to; i++) {
    const t = tokens[i];
    const opens = t.kind === 'punct' && (t.text === '(' || t.text === '[');
    if (opens && depth++ === 0 && inDefault) operand = true; // a call's arguments or a parenthesized operand
    if (t.kind === 'punct' && (t.text === ')' || t.text === ']')) depth--;
    if (depth > 0 || t.kind === 'punct' && (t.text === ')' || t.text === ']')) continue;
    if (inDefault && !(t.kind === 'word' && DEFAULT_ENDS.has(t.text))) {
      if (t.kind === 'punct') {
        // An operator, or `::` (two tokens): an operand, or a cast's type words, follows.
        castType = t.text === ':';
        operand = false;
      } else if (castType) {
        if (t.kind !== 'word') return false;
        operand = true;
      } else if (!operand) {
        operand = true;
        typeWord = t.kind === 'word';
      } else if (t.kind === 'literal' && typeWord) {
        typeWord = false; // `interval '1 day'`: a typed literal
      } else return false;
      continue;
    }
    inDefault = false;
    if (nameNext) {
      // A name, maybe qualified (schema.table): its words are any.
      nameNext = t.kind === 'punct' && t.text === '.' ? true : tokens[i + 1]?.kind === 'punct' && tokens[i + 1].text === '.';
      if (t.kind === 'word' || t.kind === 'quoted' || (t.kind === 'punct' && t.text === '.')) continue;
      return false;
    }
    if (t.kind !== 'word' || !ELEMENT_WORDS.has(t.text)) return false;
    // IDENTITY only as GENERATED ... AS IDENTITY (T-SQL's `int identity(1,1)` is not PostgreSQL).
    if (t.text === 'identity' && previous !== 'as') return false;
    if (t.text === 'default') {
      // GENERATED BY DEFAULT AS IDENTITY, ON DELETE SET DEFAULT: not a DEFAULT expression.
      inDefault = previous !== 'by' && previous !== 'set';
      operand = castType = typeWord = false;
    }
    if (NAME_FOLLOWS.has(t.text)) nameNext = true;
    previous = t.text;
  }
  return !nameNext && depth === 0 && !(inDefault && !operand);
}

/** What CREATE TABLE creates: the table, its schema when qualified, and its columns' names lower-cased (the fact extract.ts reads of it). */
export interface CreatedTable {
  table: string;
  schema?: string;
  columns: string[];
  /** CREATE TEMP TABLE: rows no other session sees. */
  temporary?: true;
}

/** A name as PostgreSQL reads it unchanged (no truncation at 63 bytes, no keyword), lower-cased as the facts have it. */
function plainName(token: Token | undefined): string | undefined {
  if (!token || (token.kind !== 'word' && token.kind !== 'quoted')) return undefined;
  const name = token.text;
  // ASCII only, so its length is its length in bytes: PostgreSQL truncates a name of 64 bytes or more.
  if (name.length === 0 || name.length > 63 || !/^[\x20-\x7e]*$/.test(name)) return undefined;
  if (token.kind === 'word' && (NOT_FUNCTION_NAMES.has(name) || NOT_COLUMN_NAMES.has(name))) return undefined;
  return name.toLowerCase();
}

/**
 * The table a top-level statement, text[start, end), creates, when the
 * statement is a plain CREATE TABLE name (columns and constraints) whose words
 * can carry no other fact: what a parse would give, read from its words
 * alone (a migration's CREATE TABLE costs the most of its parse). Anything
 * else (AS, OF, PARTITION OF, INHERITS, WITH, a name or element not plainly
 * one) is left to the parser: undefined.
 */
export function createdTableOf(text: string, start = 0, end = text.length): CreatedTable | undefined {
  return tableCreatedBy(new StatementTokens(text, start, end));
}

function tableCreatedBy(statement: StatementTokens): CreatedTable | undefined {
  // The head first: most statements met here are no CREATE TABLE.
  const head = statement.first(4);
  if (wordAt(head, 0) !== 'create' || !head.some((t) => t.kind === 'word' && t.text === 'table')) return undefined;
  const tokens = statement.whole();
  let n = 1;
  if (wordAt(tokens, n) === 'global' || wordAt(tokens, n) === 'local') n++;
  const persistence = wordAt(tokens, n);
  if (persistence === 'temp' || persistence === 'temporary' || persistence === 'unlogged') n++;
  if (wordAt(tokens, n++) !== 'table') return undefined;
  if (wordAt(tokens, n) === 'if' && wordAt(tokens, n + 1) === 'not' && wordAt(tokens, n + 2) === 'exists') n += 3;
  const first = plainName(tokens[n++]);
  if (first === undefined) return undefined;
  let schema: string | undefined;
  let table = first;
  if (tokens[n]?.kind === 'punct' && tokens[n].text === '.') {
    const second = plainName(tokens[n + 1]);
    if (second === undefined) return undefined;
    schema = first;
    table = second;
    n += 2;
  }
  if (tokens[n]?.kind !== 'punct' || tokens[n].text !== '(') return undefined;
  const open = n;
  const columns: string[] = [];
  let depth = 0;
  let element = open + 1;
  let close = -1;
  for (let i = open; i < tokens.length && close < 0; i++) {
    const t = tokens[i];
    if (t.kind !== 'punct') continue;
    if (t.text === '(') {
      depth++;
      continue;
    }
    const closes = t.text === ')' && --depth === 0;
    if (!closes && !(t.text === ',' && depth === 1)) continue;
    if (closes) close = i;
    // CREATE TABLE t (): a table of no columns.
    if (closes && i === open + 1) break;
    // One element, tokens[element, i): a column (its name, then at least its type) or a table constraint.
    const elementHead = tokens[element];
    if (i === element) return undefined;
    if (!(elementHead.kind === 'word' && TABLE_CONSTRAINT_WORDS.has(elementHead.text))) {
      const column = elementHead.kind === 'word' && elementHead.text === 'exclude' ? undefined : plainName(elementHead);
      if (column === undefined || i - element < 2 || !isName(tokens[element + 1])) return undefined;
      // After the column's name and its type's first word (`schema.type` whole).
      const qualified = tokens[element + 2]?.kind === 'punct' && tokens[element + 2].text === '.' && isName(tokens[element + 3]);
      if (!postgresElement(tokens, element + (qualified ? 4 : 2), i)) return undefined;
      columns.push(column);
    } else if (!postgresElement(tokens, element, i)) return undefined;
    element = i + 1;
  }
  if (close < 0 || tokens.slice(close + 1).some((t) => t.kind !== 'punct' || t.text !== ';')) return undefined;
  if (mayCarryFact(tokens, 'statement')) return undefined;
  const temporary = persistence === 'temp' || persistence === 'temporary' ? { temporary: true as const } : {};
  return schema === undefined ? { table, columns, ...temporary } : { table, schema, columns, ...temporary };
}

/** A CREATE FUNCTION / PROCEDURE read from its words whose body (PL/pgSQL or SQL) carries no fact: routines.ts would parse the definition and skip the body. */
function factFreeRoutine(statement: StatementTokens): RoutineDefinition | undefined {
  const head = statement.first(4);
  if (wordAt(head, 0) !== 'create' || !head.some((t) => t.kind === 'word' && (t.text === 'function' || t.text === 'procedure'))) return undefined;
  const defined = routineDefinedBy(statement.text, statement.whole());
  if (!defined || (defined.language !== 'plpgsql' && defined.language !== 'sql')) return undefined;
  return bodyCarriesNoFact(defined.body) ? defined : undefined;
}

export interface FactStatements {
  /**
   * The text with every statement that carries no fact blanked (newlines kept): offsets stay. Undefined when
   * a statement was blanked and nothing is left to parse (spaces and comments alone, as holdsNoStatement says).
   */
  text: string | undefined;
  /** The holes outside the blanked statements. */
  holes: Hole[];
  /** How many statements were blanked. */
  skipped: number;
  /** Blanked CREATE TABLE statements and what each creates, in order; `end` is past the statement's `;`, if any. */
  tables: { start: number; end: number; created: CreatedTable }[];
  /**
   * Blanked CREATE FUNCTION / PROCEDURE statements whose body carries no fact, and what each defines, in order
   * (routine-definition.ts); `end` is past the statement's `;`. The body counts as skipped, as routines.ts counts it.
   */
  routines: { start: number; end: number; defined: RoutineDefinition }[];
}

const NOT_SPACE = /[^ \t\n\r]/g;
/** `;` and the characters opensRegion says may open a string, quoted name, dollar quote or comment. */
const STATEMENT_END_OR_REGION = /[;'"/$-]/g;
const NOT_LINE_BREAKS = /[^\r\n]+/g;
const blanks = (run: string) => ' '.repeat(run.length);

/** Blanks the statements of `text` that carry no fact, so one parse reads only the others. */
export function keepFactStatements(text: string, holes: readonly Hole[]): FactStatements {
  const blanked: { start: number; end: number }[] = [];
  const tables: FactStatements['tables'] = [];
  const routines: FactStatements['routines'] = [];
  // Statements end at top-level semicolons (as splitStatements says); most start with a word that settles it.
  let start = 0;
  let first = -1;
  let h = 0;
  // `terminated`: the statement ends at its `;`, so every string, quoted name and comment in it closed.
  const end = (at: number, terminated: boolean) => {
    if (first >= 0 && mayBeFactFree(text, first)) {
      const statement = new StatementTokens(text, start, at);
      if (carriesNoFact(statement)) blanked.push({ start, end: at });
      else {
        // A CREATE TABLE or a routine's definition read from its words (not one a host interpolates into: the parse says what that is).
        while (h < holes.length && holes[h].start < start) h++;
        const interpolated = h < holes.length && holes[h].start < at;
        // The tokens from `start` are those from `first` when the first is a word (only spaces and comments before it).
        const fromFirst = statement.first(1)[0]?.kind === 'word' ? statement : new StatementTokens(text, first, at);
        const created = interpolated ? undefined : tableCreatedBy(fromFirst);
        const defined = created || interpolated || !terminated ? undefined : factFreeRoutine(fromFirst);
        if (created) {
          blanked.push({ start, end: at });
          tables.push({ start: first, end: at, created });
        } else if (defined) {
          blanked.push({ start, end: at });
          routines.push({ start: first, end: at, defined });
        }
      }
    }
    start = at;
    first = -1;
  };
  // What forEachCodeChar would do, without a call per character: jump to the next character that may
  // matter (before a statement's first: one not a space; after it: a `;` or one that may open a region).
  const length = text.length;
  let i = 0;
  while (i < length) {
    const next = first < 0 ? NOT_SPACE : STATEMENT_END_OR_REGION;
    next.lastIndex = i;
    if (!next.test(text)) break;
    const j = next.lastIndex - 1;
    const c = text.charCodeAt(j);
    const skipped = opensRegion(c) ? regionEnd(text, j, length) : -1;
    if (skipped >= 0) {
      i = skipped;
      continue;
    }
    if (c === 59 /* ; */) end(j + 1, true);
    else if (first < 0) first = j;
    i = j + 1;
  }
  end(text.length, false);
  if (blanked.length === 0) return { text, holes: [...holes], skipped: 0, tables, routines };
  // A migration of DDL alone: only spaces and comments between its blanked statements (most migrations), no text to build.
  let last = 0;
  let left = false;
  for (const span of blanked) {
    if (!holdsNoStatement(text, last, span.start)) {
      left = true;
      break;
    }
    last = span.end;
  }
  if (!left && holdsNoStatement(text, last, length)) return { text: undefined, holes: [], skipped: blanked.length, tables, routines };
  let out = '';
  last = 0;
  const lineBreaks = text.includes('\r') ? undefined : '\n';
  for (const span of blanked) {
    out += text.slice(last, span.start) + blankedRun(text, span.start, span.end, lineBreaks);
    last = span.end;
  }
  out += text.slice(last);
  let k = 0;
  const kept = holes.filter((hole) => {
    while (k < blanked.length && blanked[k].end <= hole.start) k++;
    return !(k < blanked.length && hole.start >= blanked[k].start && hole.start < blanked[k].end);
  });
  return { text: out, holes: kept, skipped: blanked.length, tables, routines };
}

/** text[from, to) with every character but line breaks a space; `lineBreaks` '\n' when the text has no '\r' (a line at a time). */
function blankedRun(text: string, from: number, to: number, lineBreaks: '\n' | undefined): string {
  if (lineBreaks === undefined) return text.slice(from, to).replace(NOT_LINE_BREAKS, blanks);
  let out = '';
  let i = from;
  for (;;) {
    const newline = text.indexOf('\n', i);
    if (newline < 0 || newline >= to) return out + ' '.repeat(to - i);
    out += ' '.repeat(newline - i) + '\n';
    i = newline + 1;
  }
}

const SPACES = /[ \t\n\r]+/y;

/**
 * Whether SQL text holds nothing the parser reads: spaces, tabs, line breaks and comments (block
 * comments closed: PostgreSQL nests them, and an unclosed one is a syntax error the parse reports).
 * A migration whose every statement keepFactStatements blanked is such a text: it is not parsed.
 */
export function holdsNoStatement(text: string, start = 0, end = text.length): boolean {
  let i = start;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      SPACES.lastIndex = i;
      SPACES.test(text);
      i = SPACES.lastIndex;
    } else if (c === 45 /* - */ && text.charCodeAt(i + 1) === 45) {
      const newline = text.indexOf('\n', i);
      if (newline < 0) return true;
      i = newline + 1;
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 42 /* * */) {
      const close = blockCommentEnd(text, i);
      if (close === undefined) return false;
      i = close;
    } else return false;
  }
  return true;
}
