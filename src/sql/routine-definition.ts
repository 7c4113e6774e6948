// CREATE FUNCTION / PROCEDURE read from its words: the routine's name, kind,
// language, input parameters and quoted body, as the parse gives them to
// routines.ts. A migration's trigger functions are defined and never read
// further (their body carries no fact, fact-free.ts), yet each cost a parse of
// the whole definition for its name and parameters.
//
// Only a definition in a plain subset of PostgreSQL's grammar is read (names
// that are no keyword of note, parameters without defaults, common types, the
// usual options, a body quoted once): any other word, punctuation or form is
// left to the parser, so a definition that does not parse is never read here,
// and a file that does not parse still gets its diagnostic.
import { dollarTagAt } from './lexer.ts';
import { NOT_COLUMN_NAMES, NOT_FUNCTION_NAMES, type Token } from './statement-tokens.ts';

export interface RoutineDefinition {
  name: string;
  kind: 'function' | 'procedure';
  /** The LANGUAGE lower-cased ('sql' when none is given, as routines.ts reads it). */
  language: string;
  /** The input parameters' names (IN, INOUT, VARIADIC or no mode), lower-cased, '' for an unnamed one. */
  parameters: string[];
  /** The body's text, as the string literal after AS holds it. */
  body: string;
}

/** Words that start a form of SET other than `name TO value` (SET ROLE, SET TIME ZONE, ...): left to the parser. */
const SET_FORMS = new Set(['role', 'session', 'names', 'schema', 'catalog', 'xml', 'transaction', 'time', 'local', 'all']);
const PARALLEL = new Set(['safe', 'unsafe', 'restricted']);
const SECURITY = new Set(['definer', 'invoker']);

const punctAt = (tokens: readonly Token[], n: number, text: string): boolean => tokens[n]?.kind === 'punct' && tokens[n].text === text;
const wordIs = (tokens: readonly Token[], n: number, word: string): boolean => tokens[n]?.kind === 'word' && tokens[n].text === word;

/** A name PostgreSQL takes as written (no keyword it reserves, ASCII, not cut at 63 bytes): a word lower-cased, a quoted name as it is. */
function nameOf(token: Token | undefined): string | undefined {
  if (!token || (token.kind !== 'word' && token.kind !== 'quoted')) return undefined;
  const name = token.text;
  if (name.length === 0 || name.length > 63 || !/^[\x20-\x7e]*$/.test(name)) return undefined;
  // A template's placeholder in quotes ("{{ .Schema }}"): the parser says what the file is.
  if (token.kind === 'quoted') return /[{}]/.test(name) ? undefined : name;
  return NOT_FUNCTION_NAMES.has(name) || NOT_COLUMN_NAMES.has(name) ? undefined : name;
}

/** What PostgreSQL's lexer reads as one number and nothing after it (`10abc` is an error there; a word here). */
const NUMBER = /(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][0-9]+)?(?![0-9A-Za-z_.$\u0080-\uffff])/y;
const INTEGER = /[0-9]+(?![0-9A-Za-z_.$\u0080-\uffff])/y;

/** Whether tokens[n] is a number literal (`integer`: of digits alone, an Iconst). */
function numberAt(text: string, tokens: readonly Token[], n: number, integer = false): boolean {
  const token = tokens[n];
  if (token?.kind !== 'literal' || token.text !== '0') return false;
  const pattern = integer ? INTEGER : NUMBER;
  pattern.lastIndex = token.start;
  return pattern.test(text);
}
const integerAt = (text: string, tokens: readonly Token[], n: number): boolean => numberAt(text, tokens, n, true);

/** `( Iconst )` at n: the index after it, or n when none opens there; -1 when one opens and is not that. */
function integerModifier(text: string, tokens: readonly Token[], n: number): number {
  if (!punctAt(tokens, n, '(')) return n;
  return integerAt(text, tokens, n + 1) && punctAt(tokens, n + 2, ')') ? n + 3 : -1;
}

/** `( number, ... )` at n (a type's modifiers): the index after it, n when none opens, -1 when it is not that. */
function literalModifiers(text: string, tokens: readonly Token[], n: number): number {
  if (!punctAt(tokens, n, '(')) return n;
  let i = n + 1;
  for (;;) {
    if (!numberAt(text, tokens, i)) return -1;
    i++;
    if (punctAt(tokens, i, ')')) return i + 1;
    if (!punctAt(tokens, i, ',')) return -1;
    i++;
  }
}

/** `WITH TIME ZONE` / `WITHOUT TIME ZONE` at n: the index after it, or n. */
function timeZone(tokens: readonly Token[], n: number): number {
  if ((wordIs(tokens, n, 'with') || wordIs(tokens, n, 'without')) && wordIs(tokens, n + 1, 'time') && wordIs(tokens, n + 2, 'zone')) return n + 3;
  return n;
}

/**
 * A type (a parameter's, a returned one) at tokens[n]: the index after it, or -1 when it is not one of the
 * forms read here (PostgreSQL's SimpleTypename with array bounds, or `table.column%TYPE`).
 */
function typeEnd(text: string, tokens: readonly Token[], n: number, setof: boolean): number {
  let i = n;
  if (setof && wordIs(tokens, i, 'setof')) i++;
  const first = tokens[i];
  if (!first) return -1;
  const word = first.kind === 'word' ? first.text : undefined;
  switch (word) {
    case 'int': case 'integer': case 'smallint': case 'bigint': case 'real': case 'boolean': case 'json':
      i++;
      break;
    case 'float':
      i = integerModifier(text, tokens, i + 1);
      break;
    case 'double':
      if (!wordIs(tokens, i + 1, 'precision')) return genericType(text, tokens, i);
      i += 2;
      break;
    case 'decimal': case 'dec': case 'numeric':
      i = literalModifiers(text, tokens, i + 1);
      break;
    case 'bit':
      i = literalModifiers(text, tokens, wordIs(tokens, i + 1, 'varying') ? i + 2 : i + 1);
      break;
    case 'character': case 'char': case 'nchar':
      i = integerModifier(text, tokens, wordIs(tokens, i + 1, 'varying') ? i + 2 : i + 1);
      break;
    case 'varchar':
      i = integerModifier(text, tokens, i + 1);
      break;
    case 'timestamp': case 'time':
      i = integerModifier(text, tokens, i + 1);
      if (i >= 0) i = timeZone(tokens, i);
      break;
    case 'interval':
      i = integerModifier(text, tokens, i + 1);
      break;
    default:
      i = genericType(text, tokens, i);
      // `jobs.status%TYPE`: a column's type (a qualified name before it).
      if (i > n + 2 && punctAt(tokens, i, '%') && wordIs(tokens, i + 1, 'type') && !punctAt(tokens, i - 1, ')')) return i + 2;
  }
  if (i < 0) return -1;
  // Array bounds: `[]`, `[3]`, repeated.
  while (punctAt(tokens, i, '[')) {
    if (punctAt(tokens, i + 1, ']')) i += 2;
    else if (integerAt(text, tokens, i + 1) && punctAt(tokens, i + 2, ']')) i += 3;
    else return -1;
  }
  return i;
}

/** A type by its name, maybe qualified, with literal modifiers: the index after it, or -1. */
function genericType(text: string, tokens: readonly Token[], n: number): number {
  if (nameOf(tokens[n]) === undefined) return -1;
  let i = n + 1;
  while (punctAt(tokens, i, '.')) {
    // After a dot any word is a name (ColLabel), reserved or not.
    const part = tokens[i + 1];
    if (!part || (part.kind !== 'word' && part.kind !== 'quoted') || part.text.length === 0) return -1;
    i += 2;
  }
  return literalModifiers(text, tokens, i);
}

/** One parameter, tokens[from, to): its mode and name ('' when unnamed); undefined when it is not read here. */
function parameterOf(text: string, tokens: readonly Token[], from: number, to: number): { input: boolean; name: string } | undefined {
  let n = from;
  let mode: string | undefined;
  const modeAt = (i: number): number => {
    const word = tokens[i]?.kind === 'word' ? tokens[i].text : '';
    if (word === 'in' && wordIs(tokens, i + 1, 'out')) {
      mode = 'inout';
      return i + 2;
    }
    if (word === 'in' || word === 'out' || word === 'inout' || word === 'variadic') {
      mode = word;
      return i + 1;
    }
    return i;
  };
  n = modeAt(n);
  // The rest is a type alone, or a name and a type (maybe with the mode between them).
  if (typeEnd(text, tokens, n, false) === to) return { input: mode !== 'out', name: '' };
  const name = nameOf(tokens[n]);
  if (name === undefined) return undefined;
  let at = n + 1;
  if (mode === undefined) at = modeAt(at);
  if (typeEnd(text, tokens, at, false) !== to) return undefined;
  return { input: mode !== 'out', name: name.toLowerCase() };
}

/** The list in parentheses at tokens[n]: each element's [from, to), and the index after `)`; undefined when it does not close. */
function elements(tokens: readonly Token[], n: number): { parts: [number, number][]; end: number } | undefined {
  if (!punctAt(tokens, n, '(')) return undefined;
  const parts: [number, number][] = [];
  if (punctAt(tokens, n + 1, ')')) return { parts, end: n + 2 };
  let depth = 0;
  let from = n + 1;
  for (let i = n + 1; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.kind !== 'punct') continue;
    if (t.text === '(' || t.text === '[') depth++;
    else if ((t.text === ')' || t.text === ']') && depth > 0) depth--;
    else if (t.text === ']') return undefined;
    else if (depth === 0 && (t.text === ',' || t.text === ')')) {
      if (i === from) return undefined;
      parts.push([from, i]);
      from = i + 1;
      if (t.text === ')') return { parts, end: i + 1 };
    }
  }
  return undefined;
}

/** The string literal at tokens[n] when it is one quoted once (a dollar quote, or '...' without backslashes): its text. */
function quotedBody(text: string, tokens: readonly Token[], n: number): string | undefined {
  const token = tokens[n];
  if (token?.kind !== 'literal' || (token.text !== '$' && token.text !== "'")) return undefined;
  // Where the next token starts bounds the literal (comments between are spaces to the parser).
  const limit = tokens[n + 1]?.start ?? text.length;
  if (token.text === '$') {
    const tag = dollarTagAt(text, token.start);
    if (tag === undefined) return undefined; // $1
    const close = text.indexOf(tag, token.start + tag.length);
    if (close < 0 || close + tag.length > limit) return undefined;
    return text.slice(token.start + tag.length, close);
  }
  // E'...', U&'...', B'...': a prefix the words would show as a word just before; '...' '...' on two lines is one string.
  let end = token.start + 1;
  for (;;) {
    const quote = text.indexOf("'", end);
    if (quote < 0 || quote >= limit) return undefined;
    if (text.charCodeAt(quote + 1) === 39) {
      end = quote + 2;
      continue;
    }
    end = quote;
    break;
  }
  const body = text.slice(token.start + 1, end);
  return body.includes('\\') ? undefined : body.replace(/''/g, "'");
}

/**
 * The routine a top-level CREATE [OR REPLACE] FUNCTION / PROCEDURE defines, read from its tokens
 * (`text` is the text they index), when the whole statement is in the subset read here and its body is
 * quoted (not BEGIN ATOMIC, not RETURN expr); undefined for anything else, which the parser reads.
 */
export function routineDefinedBy(text: string, tokens: readonly Token[]): RoutineDefinition | undefined {
  if (!wordIs(tokens, 0, 'create')) return undefined;
  let n = 1;
  if (wordIs(tokens, 1, 'or') && wordIs(tokens, 2, 'replace')) n = 3;
  const kind = wordIs(tokens, n, 'function') ? 'function' : wordIs(tokens, n, 'procedure') ? 'procedure' : undefined;
  if (!kind) return undefined;
  n++;
  const parts: string[] = [];
  for (;;) {
    const part = nameOf(tokens[n]);
    if (part === undefined) return undefined;
    parts.push(part);
    n++;
    if (!punctAt(tokens, n, '.')) break;
    if (parts.length === 3) return undefined;
    n++;
  }
  const list = elements(tokens, n);
  if (!list) return undefined;
  const parameters: string[] = [];
  let outputs = false;
  for (const [from, to] of list.parts) {
    const parameter = parameterOf(text, tokens, from, to);
    if (!parameter) return undefined;
    if (parameter.input) parameters.push(parameter.name);
    if (!parameter.input || tokens.slice(from, to).some((t) => t.kind === 'word' && (t.text === 'inout' || t.text === 'out'))) outputs = true;
  }
  n = list.end;
  if (kind === 'function' && wordIs(tokens, n, 'returns') && !wordIs(tokens, n + 1, 'null')) {
    if (wordIs(tokens, n + 1, 'table')) {
      // RETURNS TABLE (name type, ...): its columns are output parameters; with OUT or INOUT ones it does not parse.
      const columns = elements(tokens, n + 2);
      if (!columns || columns.parts.length === 0 || outputs) return undefined;
      for (const [from, to] of columns.parts) {
        if (nameOf(tokens[from]) === undefined || typeEnd(text, tokens, from + 1, false) !== to) return undefined;
      }
      n = columns.end;
    } else {
      n = typeEnd(text, tokens, n + 1, true);
      if (n < 0) return undefined;
    }
  }
  let language: string | undefined;
  let body: string | undefined;
  let ended = false;
  while (n < tokens.length) {
    const t = tokens[n];
    if (t.kind === 'punct' && t.text === ';') {
      ended = true;
      n++;
      continue;
    }
    // Only `;` after the last option: a second statement, or anything else, is the parser's.
    if (t.kind !== 'word' || ended) return undefined;
    const next = tokens[n + 1];
    switch (t.text) {
      case 'as':
        if (body !== undefined) return undefined;
        body = quotedBody(text, tokens, n + 1);
        if (body === undefined || punctAt(tokens, n + 2, ',')) return undefined;
        n += 2;
        break;
      case 'language': {
        if (language !== undefined || !next) return undefined;
        language = next.kind === 'literal' ? quotedBody(text, tokens, n + 1) : nameOf(next);
        if (language === undefined || (next.kind === 'literal' && next.text !== "'")) return undefined;
        language = language.toLowerCase();
        n += 2;
        break;
      }
      case 'immutable': case 'stable': case 'volatile': case 'strict': case 'leakproof':
        n++;
        break;
      case 'not':
        if (!wordIs(tokens, n + 1, 'leakproof')) return undefined;
        n += 2;
        break;
      case 'called':
        if (!(wordIs(tokens, n + 1, 'on') && wordIs(tokens, n + 2, 'null') && wordIs(tokens, n + 3, 'input'))) return undefined;
        n += 4;
        break;
      case 'returns':
        if (!(wordIs(tokens, n + 1, 'null') && wordIs(tokens, n + 2, 'on') && wordIs(tokens, n + 3, 'null') && wordIs(tokens, n + 4, 'input'))) return undefined;
        n += 5;
        break;
      case 'external':
      case 'security': {
        const at = t.text === 'external' ? n + 1 : n;
        if (!wordIs(tokens, at, 'security') || tokens[at + 1]?.kind !== 'word' || !SECURITY.has(tokens[at + 1].text)) return undefined;
        n = at + 2;
        break;
      }
      case 'parallel':
        if (next?.kind !== 'word' || !PARALLEL.has(next.text)) return undefined;
        n += 2;
        break;
      case 'cost':
      case 'rows':
        if (!numberAt(text, tokens, n + 1)) return undefined;
        n += 2;
        break;
      case 'set':
        n = setClause(text, tokens, n + 1);
        if (n < 0) return undefined;
        break;
      default:
        return undefined;
    }
  }
  if (body === undefined) return undefined;
  return { name: parts.join('.'), kind, language: language ?? 'sql', parameters, body };
}

/** `SET name TO value, ...`, `SET name = ...` or `SET name FROM CURRENT` after SET at tokens[n]: the index after it, or -1. */
function setClause(text: string, tokens: readonly Token[], n: number): number {
  let i = n;
  const first = nameOf(tokens[i]);
  if (first === undefined || (tokens[i].kind === 'word' && SET_FORMS.has(first))) return -1;
  i++;
  while (punctAt(tokens, i, '.')) {
    if (nameOf(tokens[i + 1]) === undefined) return -1;
    i += 2;
  }
  if (wordIs(tokens, i, 'from')) return wordIs(tokens, i + 1, 'current') ? i + 2 : -1;
  if (!wordIs(tokens, i, 'to') && !punctAt(tokens, i, '=')) return -1;
  i++;
  if (wordIs(tokens, i, 'default')) return i + 1;
  for (;;) {
    const value = tokens[i];
    if (numberAt(text, tokens, i) || (value?.kind === 'literal' && value.text === "'" && quotedBody(text, tokens, i) !== undefined)) i++;
    else if (value?.kind === 'word' && (value.text === 'on' || value.text === 'true' || value.text === 'false' || nameOf(value) !== undefined)) i++;
    else if (value?.kind === 'quoted' && nameOf(value) !== undefined) i++;
    else return -1;
    if (!punctAt(tokens, i, ',')) return i;
    i++;
  }
}
