// A .sql file as the tool that runs it reads it, before the SQL parser sees
// it: psql meta-commands and COPY data are not SQL, psql variables and the
// host placeholders of query files (aiosql, yesql, pgtyped, sqlc, Python
// format templates, Flyway and goose ${...}, the ? of JDBC and sqlx) stand for values or names, a Racket
// `#lang` line is the reader's, and migration tools' markers end statements. The result has the same length
// as the text, so every offset stays the user's.
import { dollarTagAt, forEachCodeChar, isIdentChar, skipBlockComment, skipQuoted } from '../../sql/lexer.ts';
import type { Hole } from '../../sql/index.ts';
import { PGTAP_SCRIPT } from './pgtap-suite.ts';
import { pgPromiseVariableAt } from './pg-promise.ts';
import { markerOf, migrationByPath, type MigrationTool } from './migration-tools.ts';

export type { MigrationTool } from './migration-tools.ts';

export type QueryTool = 'aiosql/yesql' | 'sqlc' | 'pgtyped' | 'procrastinate';

export interface ScriptReading {
  /** The text with what is not SQL blanked (newlines kept) and statement-ending markers turned into `;`. */
  sql: string;
  holes: Hole[];
  /** psql meta-commands were seen: the file is a psql script. */
  psql: boolean;
  /**
   * A test script: pg_regress's layout, a pgTAP script (pg_prove) or a file one includes (src/languages/sql/pgtap-suite.ts).
   * It runs in the test's own database, on psql's connection.
   */
  regression?: boolean;
  /** psql variables set with \set before their use, by name. */
  variables: Map<string, string>;
  /** The migration tool whose markers or file layout the file has. */
  migration?: MigrationTool;
  /** The query-file tool whose `-- name:` / `@name` headers the file has. */
  queries?: QueryTool;
  /**
   * Where the script turned psql's ON_ERROR_STOP off (`\set ON_ERROR_STOP 0` up to `\set ON_ERROR_STOP 1` or the
   * end): a regression script's statements there fail on purpose, and psql goes on.
   */
  errorsExpected?: { start: number; end: number }[];
  /**
   * An extension's install or update script (`ext--1.0.sql`, `ext--1.0--1.1.sql`, its `\echo Use "CREATE EXTENSION`
   * guard, `@extschema@`): CREATE EXTENSION runs it with check_function_bodies off, so its bodies are not compiled.
   */
  extension?: boolean;
}

/**
 * A regression script in pg_regress's layout (`test/sql/x.sql` next to `test/expected/x.out`; an extension's
 * `regress/sql/`, `src/test/regress/sql/`, `tsl/test/shared/sql/include/`): psql runs it.
 */
const PG_REGRESS_SCRIPT = /(?:^|\/)(?:regress|tests?)\/(?:[\w-]+\/)?sql\/(?:[\w.-]+\/)?[^/]+\.sql$/i;


/** psql commands after which the query buffer is sent: they end the statement before them. */
const SENDING_COMMANDS = new Set(['g', 'gx', 'gset', 'gexec', 'gdesc', 'crosstabview', 'watch', 'bind', 'bind_named', 'sendpipeline']);

/** An extension script's name: `ext--1.0.sql`, `ext--1.0--1.1.sql`. */
const EXTENSION_SCRIPT_NAME = /(?:^|\/)[A-Za-z_][\w-]*--\d[\w.]*(?:--\d[\w.]*)?\.sql$/;
/** The guard line contrib's extension scripts start with: run by psql, it stops there. */
const EXTENSION_GUARD = /^\\echo Use "(?:CREATE|ALTER) EXTENSION\b/m;
/** The substitutions of an extension script (CREATE EXTENSION fills them in). */
const EXTENSION_PLACEHOLDER = /^@(?:extschema(?::[A-Za-z_][A-Za-z0-9_$]*)?|extowner)@/;
/** A Racket reader line (`#lang north`): the language the rest of the file is read in, no SQL. */
const RACKET_LANG = /^(?:\uFEFF)?#lang[ \t]+([\w/-]+)[^\n]*/;
/** north's `-- @up {`, `-- @down {` and `-- }` lines: each block is run as its own script. */
const NORTH_BLOCK = /^--\s*(?:@(?:up|down)\s*\{|\})\s*$/;
/** A C preprocessor directive at the start of a line: no SQL starts with `#` and a word. */
const CPP_DIRECTIVE = /^#[ \t]*(?:include|if|ifdef|ifndef|elif|else|endif|define|undef|pragma|error|line)\b/;

/**
 * A `-- name:` header of aiosql, yesql (the name, its suffix, aiosql's parameter list) or sqlc (`:one`, ...): nothing
 * else on the line. pg_dump's `-- Name: x; Type: TABLE; Schema: public; Owner: -` describes the object that follows.
 */
const NAMED_QUERY = /^--[ \t]*name:[ \t]*[\w.-]+(?:[!<>*#^$]+)?(?:\([^)\n]*\)(?:[!<>*#^$]+)?)?[ \t]*(:(one|many|exec|execrows|execresult|execlastid|copyfrom|batchexec|batchmany|batchone)\b)?[ \t]*\r?$/im;
/** A clause no statement starts with: a named query that begins so is a fragment of another. */
const CLAUSE_ONLY = /^\s*(?:for\s+(?:update|no\s+key\s+update|share|key\s+share)|where|and|or|order\s+by|group\s+by|having|limit|offset|returning|on\s+conflict|(?:left|right|inner|full|cross)?\s*join|skip\s+locked|nowait)\b/i;
const PGTYPED = /\/\*[\s\S]*?@name\s+\w+[\s\S]*?\*\//;
/** procrastinate's query files: a `-- query_name --` line starts each query, and a query needs no `;`. */
const DASHED_NAME = /^--\s*[A-Za-z_][\w.-]*\s*--\s*$/;
const DASHED_NAMES = /^--[ \t]*[A-Za-z_][\w.-]*[ \t]*--[ \t]*\r?$/gm;
/** A psql meta-command line (`\c`, `\set`, `\ir`): a psql script, whose `-- TEST4 --` lines are section titles. */
const PSQL_COMMAND_LINE = /^[ \t]*\\[A-Za-z]/m;
/**
 * An application's own `{{NAME}}` placeholder (Mustache-like): a bare or dotted name (`{{ db.tablespace.index }}`, an
 * attribute a Jinja renderer fills in), no call, filter or other Jinja expression; or a Go
 * text/template action that prints a field (`{{ .Schema }}`, `{{ index .Options "Namespace" }}`: pop migrations),
 * or a function of one (`{{ identifier .Parameters.tableName }}`, popx's quoting of a name), no control action (if, range).
 */
const DOUBLE_BRACE = /^\{\{-?\s*(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|\.[A-Za-z_][\w.]*|index\s+\.[A-Za-z_][\w.]*(?:\s+"[\w.-]*")+|(?!(?:if|range|with|template|block|define|else|end)\b)[A-Za-z_]\w*\s+\$?\.[A-Za-z_][\w.]*)\s*-?\}\}/;

/** The characters readScript's loop has a branch for: `'` `"` `-` `/` `$` `@` `\` `;` `:` `%` `{` `?` `#`. */
const ORDINARY_RUN_END = /['"\-/$@\\;:%{?#]/g;

export function readScript(text: string, file: string): ScriptReading {
  // What is not SQL, in text order: blanked (newlines kept), the first character a `;` where it ends a statement.
  const edits: { start: number; end: number; semicolon: boolean }[] = [];
  const holes: Hole[] = [];
  const variables = new Map<string, string>();
  // pg_regress runs each script of its sql/ folder through psql, on a connection of its own.
  let psql = PG_REGRESS_SCRIPT.test(file.replace(/\\/g, '/'));
  let migration = migrationByPath(file);
  const namedQuery = NAMED_QUERY.exec(text);
  const queries: QueryTool | undefined = namedQuery
    ? namedQuery[1] ? 'sqlc' : 'aiosql/yesql'
    : PGTYPED.test(text) ? 'pgtyped' : dashedNames(text) && !PSQL_COMMAND_LINE.test(text) ? 'procrastinate' : undefined;
  const blank = (start: number, end: number) => {
    if (end > start) edits.push({ start, end, semicolon: false });
  };
  const endStatementAt = (start: number, end: number) => {
    edits.push({ start, end: Math.max(end, start + 1), semicolon: true });
  };
  /** Each named query: where its header starts and where its text starts (after the header line). */
  const queryStarts: { header: number; body: number }[] = [];
  const errorsExpected: { start: number; end: number }[] = [];
  // pg_regress runs psql with ON_ERROR_STOP off: its scripts' failing statements are in the expected output.
  let errorsFrom: number | undefined = psql ? 0 : undefined;
  /** The other branches of an `\if` inside a statement: blanked, and not read. */
  let skipBranches: { from: number; to: number } | undefined;
  const length = text.length;
  let statementStart = 0;
  let i = 0;
  const racket = RACKET_LANG.exec(text);
  if (racket) {
    if (racket[1] === 'north') migration = 'north';
    blank(0, racket[0].length);
    i = racket[0].length;
  }
  // Where the next `@ext` is, looked up again only once passed: a search from each quote to the end of the file
  // made reading a big script quadratic in its quotes.
  let extensionMark = -1;
  const nextExtensionMark = (from: number): number => {
    if (extensionMark !== Infinity && extensionMark < from) {
      const found = text.indexOf('@ext', from);
      extensionMark = found < 0 ? Infinity : found;
    }
    return extensionMark;
  };
  const lineEnd = (from: number) => {
    const newline = text.indexOf('\n', from);
    return newline < 0 ? length : newline;
  };
  const atLineStart = (index: number) => {
    let k = index - 1;
    while (k >= 0 && (text[k] === ' ' || text[k] === '\t')) k--;
    return k < 0 || text[k] === '\n';
  };
  /** Skips COPY data from the line after `from` to the line `\.` (or the end). */
  const skipCopyData = (from: number): number => {
    let line = lineEnd(from) + 1;
    while (line < length) {
      const end = lineEnd(line);
      const content = text.slice(line, end).replace(/\r$/, '');
      blank(line, end);
      line = end + 1;
      if (content === '\\.') break;
    }
    return Math.min(line, length);
  };

  while (i < length) {
    if (skipBranches && i >= skipBranches.from) {
      i = Math.max(i, skipBranches.to);
      skipBranches = undefined;
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === 39 /* ' */) {
      const escapes = i > 0 && (text[i - 1] === 'E' || text[i - 1] === 'e') && !isIdentChar(text.charCodeAt(i - 2));
      const end = skipQuoted(text, i, 39, escapes);
      // CREATE EXTENSION fills in @extschema@ in strings too: a function body written as '...'.
      if (nextExtensionMark(i) < end && text.slice(i, end).includes('@ext')) quotedExtensionPlaceholders(text, i + 1, end - 1, holes);
      i = end;
    } else if (c === 34 /* " */) {
      const quoted = quotedTemplateAt(text, i);
      // "{{ index .Options "Namespace" }}": a template's name in quotes (its own quotes are the template's, not SQL's).
      if (quoted) holes.push({ start: i, end: quoted, identifier: true, identifierText: quoteIdentifier(text.slice(i + 1, quoted - 1)) });
      i = quoted ?? skipQuoted(text, i, 34, false);
    } else if (c === 45 /* - */ && text.charCodeAt(i + 1) === 45) {
      const end = lineEnd(i);
      const comment = text.slice(i, end).replace(/\r$/, '');
      const lineStart = atLineStart(i);
      // aiosql, yesql and sqlc split a file at its `-- name:` headers: a query needs no `;`.
      if (lineStart && ((queries === 'procrastinate' && DASHED_NAME.test(comment)) || (queries && queries !== 'pgtyped' && /^--\s*name:/i.test(comment)))) {
        endStatementAt(i, end);
        statementStart = i + 1;
        queryStarts.push({ header: i, body: end });
      }
      if (lineStart && migration === 'north' && NORTH_BLOCK.test(comment)) {
        endStatementAt(i, end);
        statementStart = i + 1;
      }
      const marker = markerOf(comment, lineStart);
      if (marker) {
        migration ??= marker.tool;
        if (marker.endsStatement) {
          endStatementAt(i, end);
          statementStart = i + 1;
        }
      }
      i = end + 1;
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 42 /* * */) {
      const end = skipBlockComment(text, i);
      // pgtyped: each `/* @name ... */` starts a query.
      if (queries === 'pgtyped' && /^\/\*[\s\S]*@name\b/.test(text.slice(i, end))) {
        endStatementAt(i, end);
        statementStart = i + 1;
      }
      i = end;
    } else if (c === 36 /* $ */ && !isIdentChar(text.charCodeAt(i - 1))) {
      const tag = dollarTagAt(text, i);
      if (tag !== undefined) {
        const close = text.indexOf(tag, i + tag.length);
        const end = close < 0 ? length : close + tag.length;
        if (close > 0) bodyPlaceholders(text, i + tag.length, close, variables, holes);
        if (close > 0) cppLines(text, i + tag.length, close).forEach(([from, to]) => blank(from, to));
        const next = close > 0 && ROUTINE_HEAD.test(asParsed(text.slice(statementStart, i))) ? statementAfterRoutine(text, end) : undefined;
        if (next !== undefined) {
          // Functions pasted one after another without `;` (a GUI runs each on its own): the next statement starts
          // at the line that begins one, after the body and the function's options.
          holes.push({ start: next, end: next, text: ';' });
          statementStart = next;
        }
        if (close > 0 && /^do\b(?:\s+language\s+(?:\w+|'[^'\n]*'))?\s*$/i.test(asParsed(text.slice(statementStart, i)).trim())) {
          // DO runs its one body: a DO without `;` ends there, and does not take the next statement in. Its language
          // may follow the body, as a name or a string (`$$ ... $$ LANGUAGE 'plpgsql';`).
          const after = /^(?:\s+language\s+(?:\w+|'[^'\n]*'))?/i.exec(text.slice(end))?.[0].length ?? 0;
          if (startsStatement(text, end + after)) holes.push({ start: end + after, end: end + after, text: ';' });
        }
        i = end;
      } else if (text[i + 1] === '{') {
        i = templateAt(text, i, i, holes);
      } else {
        // pg-promise's `$1:name`, `$(name:raw)`, `$<name>` (pg-promise.ts): a name, any text, or a value.
        const variable = pgPromiseVariableAt(text, i);
        if (variable?.puts === 'name') holes.push({ start: i, end: variable.end, identifier: true, identifierText: quoteIdentifier(variable.text) });
        else if (variable) holes.push({ start: i, end: variable.end, identifierText: quoteIdentifier(variable.text), ...(variable.puts === 'text' ? { fragment: true } : {}) });
        i = variable ? variable.end : i + 1;
      }
    } else if (c === 36 /* $ */ && text[i + 1] === '{' && (holes.at(-1)?.end ?? 0) <= i) {
      // tenant_${id}: the name the template builds starts before it.
      let start = i;
      while (start > 0 && isIdentChar(text.charCodeAt(start - 1)) && text[start - 1] !== '$') start--;
      i = (holes.at(-1)?.end ?? 0) <= start ? templateAt(text, start, i, holes) : i + 1;
    } else if (c === 64 /* @ */ && EXTENSION_PLACEHOLDER.test(text.slice(i, i + 80))) {
      // An extension script's @extschema@, @extschema:cube@, @extowner@: CREATE EXTENSION puts the name in.
      const end = text.indexOf('@', i + 1) + 1;
      holes.push({ start: i, end, identifier: true, identifierText: quoteIdentifier(text.slice(i, end)) });
      i = end;
    } else if (c === 92 /* \ */) {
      // A psql meta-command: everything to the end of the line.
      psql = true;
      const end = lineEnd(i);
      const command = text.slice(i + 1, end).replace(/\r$/, '');
      const name = /^[a-z_.!?;]+/i.exec(command)?.[0]?.toLowerCase() ?? '';
      if (name === 'set') readSet(command, variables);
      const stop = name === 'unset' || name === 'set' ? /^(?:un)?set\s+ON_ERROR_STOP\b\s*(\S*)/i.exec(command) : null;
      if (stop) {
        const off = name === 'unset' || /^'?(?:0|off|false|no)'?$/i.test(stop[1]);
        if (off && errorsFrom === undefined) errorsFrom = i;
        else if (!off && errorsFrom !== undefined) {
          errorsExpected.push({ start: errorsFrom, end: i });
          errorsFrom = undefined;
        }
      }
      if (name === 'if' && asParsed(text.slice(statementStart, i)).trim() !== '') {
        // \if ... \else ... \endif inside one statement: psql sends one branch of it. The first is read; both together
        // are not SQL (two select lists, two FROMs).
        const branches = otherBranches(text, end);
        if (branches) {
          blank(branches.from, branches.to);
          skipBranches = branches;
        }
      }
      if (SENDING_COMMANDS.has(name)) endStatementAt(i, end);
      else blank(i, end);
      if (name === 'copy' && /\bfrom\s+stdin\b/i.test(command)) {
        i = skipCopyData(i);
        statementStart = i;
        continue;
      }
      i = end + 1;
      if (SENDING_COMMANDS.has(name)) statementStart = i;
    } else if (c === 59 /* ; */) {
      const statement = text.slice(statementStart, i);
      i++;
      statementStart = i;
      // COPY ... FROM stdin: its data follows. (Cheap test first: most statements are not COPY.)
      if (/\bstdin\b/i.test(statement) && /^\s*copy\b/i.test(asParsed(statement)) && /\bfrom\s+stdin\b/i.test(statement)) {
        i = skipCopyData(i - 1);
        statementStart = i;
      }
    } else if (c === 58 /* : */ && wholeStatementVariable(text, i, lineEnd(i), variables) && asParsed(text.slice(statementStart, i)).trim() === '') {
      // `:create_cmd;` alone: a statement (or a meta-command such as \copy) the runner or a \gset put in the variable.
      // What it runs is not in the file: it is read as nothing.
      const end = i + 1 + bareNameAt(text, i + 1).length;
      blank(i, end);
      i = end;
      statementStart = end;
    } else if (c === 58 /* : */) {
      const holesBefore = holes.length;
      const next = placeholderAtColon(text, i, variables, holes, !queries);
      // :'name' and :"name" are psql's own (query-file tools write :name): they make a psql script without any \ command.
      if (holes.length > holesBefore && (text[i + 1] === "'" || text[i + 1] === '"')) psql = true;
      i = next;
    } else if (c === 37 /* % */) {
      i = pyformatAt(text, i, holes);
    } else if (c === 123 /* { */) {
      const doubled = text[i + 1] === '{' ? DOUBLE_BRACE.exec(text.slice(i, i + 120)) : null;
      const close = doubled ? i + doubled[0].length - 1 : text.indexOf('}', i + 1);
      // An application's {{NAME}}, and Python str.format templates' {where}, {table}, {}: a value, a name or a clause.
      if (doubled || (close > 0 && /^\w*$/.test(text.slice(i + 1, close)))) {
        holes.push({ start: i, end: close + 1, identifierText: quoteIdentifier(text.slice(i, close + 1)), fragment: true });
        i = close + 1;
      } else i++;
    } else if (c === 63 /* ? */) {
      i = qmarkAt(text, i, holes);
    } else if (c === 35 /* # */ && atLineStart(i) && CPP_DIRECTIVE.test(text.slice(i, i + 16))) {
      // A C preprocessor line: the build runs the file through cpp first (an extension's `#include "udfs/f/latest.sql"`).
      // The included file is read on its own; both branches of an #if are read.
      const end = cppDirectiveEnd(text, i, length);
      blank(i, end);
      i = end;
    } else if (c === 64 /* @ */ && queries === 'sqlc' && /[A-Za-z_]/.test(text[i + 1] ?? '') && !isIdentChar(text.charCodeAt(i - 1))) {
      // sqlc's @name parameters.
      let j = i + 1;
      while (j < length && isIdentChar(text.charCodeAt(j))) j++;
      holes.push({ start: i, end: j, identifierText: quoteIdentifier(text.slice(i, j)) });
      i = j;
    } else {
      // A character none of the branches above reads: on to the next that one may (one regex jump, not a
      // pass of this loop per character). A branch skip that starts in between is taken at the loop's top.
      ORDINARY_RUN_END.lastIndex = i + 1;
      i = ORDINARY_RUN_END.test(text) ? ORDINARY_RUN_END.lastIndex - 1 : length;
    }
  }
  // A named query that is only a clause is a fragment the application splices into another query (`:_lock` standing
  // for `for update skip locked`): no statement of its own.
  queryStarts.forEach(({ body: start }, k) => {
    const end = k + 1 < queryStarts.length ? queryStarts[k + 1].header : length;
    if (end > start && CLAUSE_ONLY.test(asParsed(text.slice(start, end)))) {
      blank(start, end);
      for (let h = holes.length - 1; h >= 0; h--) if (holes[h].start >= start && holes[h].end <= end) holes.splice(h, 1);
    }
  });
  if (errorsFrom !== undefined) errorsExpected.push({ start: errorsFrom, end: length });
  const reading: ScriptReading = { sql: applyEdits(text, edits), holes, psql, variables };
  if (PG_REGRESS_SCRIPT.test(file.replace(/\\/g, '/'))) reading.regression = true;
  else if (PGTAP_SCRIPT.test(text)) {
    // Run by pg_prove through psql, on a connection of its own, with ON_ERROR_STOP as the suite sets it.
    reading.regression = true;
    reading.psql = true;
  }
  if (EXTENSION_SCRIPT_NAME.test(file.replace(/\\/g, '/')) || EXTENSION_GUARD.test(text) || holes.some((h) => h.text?.startsWith('"@ext') || h.identifierText?.startsWith('"@ext'))) reading.extension = true;
  if (errorsExpected.length > 0) reading.errorsExpected = errorsExpected;
  if (migration) reading.migration = migration;
  if (queries) reading.queries = queries;
  return reading;
}

/** `\set name value...`: psql joins the values; quotes are removed. */
function readSet(command: string, variables: Map<string, string>): void {
  const match = /^set\s+([A-Za-z_][\w]*)\s*(.*)$/i.exec(command);
  if (!match) return;
  const parts: string[] = [];
  const re = /'((?:[^']|'')*)'|(\S+)/g;
  for (let m = re.exec(match[2]); m; m = re.exec(match[2])) {
    // psql puts a variable's value in for an unquoted :name (`\set ROLE_ADMIN :TEST_DBNAME _admin`): one the file
    // never \set (the runner's -v) makes the new value unknown too.
    const variable = m[2] === undefined ? undefined : /^:([A-Za-z_]\w*)$/.exec(m[2])?.[1];
    const value = variable === undefined ? undefined : variables.get(variable);
    if (variable !== undefined && value === undefined) {
      variables.delete(match[1]);
      return;
    }
    parts.push(m[1] !== undefined ? m[1].replace(/''/g, "'") : (value ?? m[2]));
  }
  variables.set(match[1], parts.join(''));
}

/**
 * psql's :name, :'name', :"name", and query files' :name / :name! (pgtyped). Returns where to go on. Outside a query
 * file (`psqlText`), a bare :name the file never \set is psql's: the runner's `-v` puts its text in where it stands,
 * so it may also be a string (`AS :MODULE_PATHNAME, 'symbol'`) or a piece of a statement (`:PREFIX SELECT ...` with
 * PREFIX set to `EXPLAIN (costs off)` or to nothing by the script that includes the file).
 */
function placeholderAtColon(text: string, i: number, variables: Map<string, string>, holes: Hole[], psqlText: boolean): number {
  const prev = text.charCodeAt(i - 1);
  const next = text[i + 1] ?? '';
  if (next === ':' || next === '=') return i + 2; // a cast, or := assignment
  // a[1:n], a[:n], and a word right before (time literals are in strings) are not variables; `x:::name` is a cast to one.
  // psql itself fills in a variable it has wherever it stands, so one the script \set is one even there (`ARRAY[:id1, :id2]`).
  // ARRAY[ builds an array, it is not a slice: `ARRAY[:node, :port]` holds variables the runner passes (psql -v).
  const arrayStart = prev === 91 && /\barray\s*$/i.test(text.slice(Math.max(0, i - 12), i - 1));
  if ((prev === 93 || (prev === 91 && !arrayStart) || isIdentChar(prev)) && !variables.has(bareNameAt(text, i + 1))) return i + 1;
  if (next === "'" || next === '"') {
    const close = text.indexOf(next, i + 2);
    const name = close > 0 ? text.slice(i + 2, close) : '';
    if (!/^[A-Za-z_]\w*$/.test(name)) return i + 1;
    const value = variables.get(name);
    if (value !== undefined) holes.push({ start: i, end: close + 1, text: next === "'" ? `'${value.replace(/'/g, "''")}'` : quoteIdentifier(value) });
    else if (next === '"') holes.push({ start: i, end: close + 1, identifier: true, identifierText: quoteIdentifier(`:${name}`) });
    // psql writes :'name' as a string literal: where no parameter may stand (a server's OPTIONS), it is one.
    else holes.push({ start: i, end: close + 1, identifierText: `':${name}'` });
    return close + 1;
  }
  const name = bareNameAt(text, i + 1);
  if (!name) return i + 1;
  let j = i + 1 + name.length;
  if (text[j] === '!') j++; // pgtyped: a required parameter
  const value = variables.get(name);
  if (value !== undefined) {
    const expanded = expandVariables(value, variables, new Set([name]));
    holes.push({ start: i, end: j, text: expanded.text, ...(expanded.unknown ? { opaque: true } : {}) });
  } else if (psqlText && text[j - 1] !== '!') holes.push({ start: i, end: j, identifierText: quoteIdentifier(`:${name}`), stringText: `':${name}'`, fragment: true, opaque: true });
  else holes.push({ start: i, end: j, identifierText: quoteIdentifier(`:${name}`) });
  return j;
}

/**
 * psql reads a variable's value again as it puts it in, so the variables in it are filled in with their values at the
 * use (`\\set fn 'f(:''algo'')'` then `\\set algo gorilla` and `:fn` is `f('gorilla')`); a variable is not filled in
 * inside its own value. `unknown`: the value holds a bare variable the file never \\set (the runner's -v).
 */
function expandVariables(value: string, variables: Map<string, string>, using: Set<string>): { text: string; unknown: boolean } {
  if (!value.includes(':')) return { text: value, unknown: false };
  let unknown = false;
  const text = value.replace(/(^|[^:\w])(?::'([A-Za-z_]\w*)'|:"([A-Za-z_]\w*)"|:([A-Za-z_]\w*))/g, (whole, before: string, literal?: string, identifier?: string, bare?: string) => {
    const name = (literal ?? identifier ?? bare)!;
    const inner = using.has(name) ? undefined : variables.get(name);
    const filled = inner === undefined ? undefined : expandVariables(inner, variables, new Set([...using, name]));
    if (filled?.unknown) unknown = true;
    if (literal !== undefined) return `${before}'${(filled?.text ?? `:${name}`).replace(/'/g, "''")}'`;
    if (identifier !== undefined) return `${before}${quoteIdentifier(filled?.text ?? `:${name}`)}`;
    if (filled === undefined) {
      unknown = true;
      return whole;
    }
    return `${before}${filled.text}`;
  });
  return { text, unknown };
}

/**
 * A psql variable that is a whole line (`:cmd` or `:cmd;`) whose text the file does not show, or shows as a
 * meta-command (`\set cmd '\\copy t from ...'`): psql runs what it holds.
 */
function wholeStatementVariable(text: string, i: number, end: number, variables: Map<string, string>): boolean {
  const alone = /^:([A-Za-z_]\w*)[ \t]*;?[ \t]*(?:--.*)?\r?$/.exec(text.slice(i, end));
  if (!alone) return false;
  const value = variables.get(alone[1]);
  return value === undefined || value.trimStart().startsWith('\\');
}

/**
 * ${name} (Flyway placeholders, goose ENVSUB, envsubst, a JS template's text) at `dollar`: filled before the SQL
 * runs. Letters and digits around it are part of the one name it builds (`${name}_tenant_id`, from `start`).
 * Returns where to go on.
 */
function templateAt(text: string, start: number, dollar: number, holes: Hole[]): number {
  const close = text.indexOf('}', dollar + 2);
  if (close < 0 || close - dollar >= 200 || text.slice(dollar + 2, close).includes('\n')) return dollar + 1;
  let end = close + 1;
  while (end < text.length && isIdentChar(text.charCodeAt(end)) && text[end] !== '$') end++;
  holes.push({ start, end, identifierText: quoteIdentifier(text.slice(start, end)) });
  return end;
}

/** Where the C preprocessor directive at `i` ends: its line, and the lines a `\` at the end continues it to. */
function cppDirectiveEnd(text: string, i: number, limit: number): number {
  const lineEnd = (from: number) => {
    const newline = text.indexOf('\n', from);
    return newline < 0 || newline > limit ? limit : newline;
  };
  let end = lineEnd(i);
  while (end < limit && /\\\r?$/.test(text.slice(Math.max(i, end - 2), end))) end = lineEnd(end + 1);
  return end;
}

/**
 * The C preprocessor lines of a dollar-quoted body (cpp reads the whole file, strings and bodies too). PL/pgSQL's
 * own `#variable_conflict`, `#print_strict_params` and `#option` are not among them.
 */
function cppLines(text: string, start: number, end: number): [number, number][] {
  const out: [number, number][] = [];
  const body = text.slice(start, end);
  if (!body.includes('#')) return out;
  const line = /^[ \t]*#/gm;
  for (let m = line.exec(body); m; m = line.exec(body)) {
    const hash = start + m.index + m[0].length - 1;
    if (!CPP_DIRECTIVE.test(text.slice(hash, hash + 16))) continue;
    const stop = cppDirectiveEnd(text, hash, end);
    out.push([hash, stop]);
    line.lastIndex = stop - start;
  }
  return out;
}

/** @extschema@ and the like inside a quoted string [start, end): read as a name where they stand. */
function quotedExtensionPlaceholders(text: string, start: number, end: number, holes: Hole[]): void {
  for (let at = text.indexOf('@ext', start); at >= 0 && at < end; at = text.indexOf('@ext', at + 1)) {
    if (!EXTENSION_PLACEHOLDER.test(text.slice(at, at + 80))) continue;
    const close = text.indexOf('@', at + 1) + 1;
    if (close > end) break;
    holes.push({ start: at, end: close, text: quoteIdentifier(text.slice(at, close)) });
    at = close - 1;
  }
}

/**
 * After the line of an `\if` (its end at `from`): where its `\elif`/`\else` branches start and where the matching
 * `\endif` line starts, or none when it has no other branch or no `\endif`.
 */
function otherBranches(text: string, from: number): { from: number; to: number } | undefined {
  const line = /^[ \t]*\\(if|elif|else|endif)\b/gm;
  line.lastIndex = from;
  let depth = 0;
  let other: number | undefined;
  for (let m = line.exec(text); m; m = line.exec(text)) {
    const command = m[1];
    if (command === 'if') depth++;
    else if (command === 'endif' && depth > 0) depth--;
    else if (command === 'endif') return other === undefined ? undefined : { from: other, to: m.index };
    else if (depth === 0) other ??= m.index;
  }
  return undefined;
}

/** The name that starts at `start` (letters, digits, `_`), or ''. */
function bareNameAt(text: string, start: number): string {
  if (!/[A-Za-z_]/.test(text[start] ?? '')) return '';
  let j = start;
  while (j < text.length && isIdentChar(text.charCodeAt(j)) && text[j] !== '$') j++;
  return text.slice(start, j);
}

/**
 * Placeholders inside a dollar-quoted body: `:name`, `{{NAME}}`, `{name}`, `${name}`, `@extschema@`.
 * psql leaves dollar quotes alone, but the tools that run such files
 * (graphile-worker's `:GRAPHILE_WORKER_SCHEMA`, Flyway, an application's own
 * template) fill them in as text everywhere, and none of them is PL/pgSQL or
 * SQL syntax. Read as a name, which stands where a value does too (a column
 * reference).
 */
function bodyPlaceholders(text: string, start: number, end: number, variables: Map<string, string>, holes: Hole[]): void {
  const body = text.slice(start, end);
  if (!/:|\{\{|\{[A-Za-z_]\w*\}|\$\{|@ext/.test(body)) return;
  const name = (k: number, j: number, shown: string) => holes.push({ start: start + k, end: start + j, text: quoteIdentifier(shown) });
  // "{{ ... }}" first: the template's own quotes would end the quoted name early.
  const code = body.replace(/"\{\{[^\n]*?\}\}"/g, (found, at: number) => {
    if (quotedTemplateAt(body, at) !== at + found.length) return found;
    name(at, at + found.length, found.slice(1, -1));
    return '_'.repeat(found.length);
  });
  forEachCodeChar(code, (k) => {
    const c = code.charCodeAt(k);
    if (c === 64 /* @ */) {
      // An extension script's @extschema@ in a body: CREATE EXTENSION fills it in everywhere in the script's text.
      if (!EXTENSION_PLACEHOLDER.test(code.slice(k, k + 80))) return;
      const j = code.indexOf('@', k + 1) + 1;
      name(k, j, code.slice(k, j));
      return j;
    }
    if (c === 123 /* { */ || c === 36 /* $ */) {
      // {{NAME}}, ${name}, and a Python str.format {schema} as at the top level: none is PL/pgSQL syntax.
      const template = c === 123 ? DOUBLE_BRACE.exec(code.slice(k, k + 120)) ?? /^\{[A-Za-z_]\w*\}/.exec(code.slice(k, k + 80)) : /^\$\{[\w.-]+\}/.exec(code.slice(k, k + 120));
      if (!template) return;
      name(k, k + template[0].length, template[0]);
      return k + template[0].length;
    }
    if (c !== 58 /* : */) return;
    const next = code[k + 1] ?? '';
    if (next === ':' || next === '=') return k + 2;
    const prev = code.charCodeAt(k - 1);
    if (prev === 93 || prev === 91 || isIdentChar(prev) || !/[A-Za-z_]/.test(next)) return k + 1;
    let j = k + 1;
    while (j < code.length && isIdentChar(code.charCodeAt(j)) && code[j] !== '$') j++;
    const value = variables.get(code.slice(k + 1, j));
    if (value !== undefined) holes.push({ start: start + k, end: start + j, text: value });
    else name(k, j, code.slice(k, j));
    return j;
  });
}

/** Whether a statement (not `;`, a comment or the end of the text) starts at `from`, past whitespace. */
/** The head of a routine whose body is a dollar-quoted string. */
const ROUTINE_HEAD = /^\s*create\s+(?:or\s+replace\s+)?(?:function|procedure)\b/i;
/** A line that starts a statement no routine option can begin (`set` can: `set search_path = ...`). */
const NEXT_STATEMENT = /\n[ \t]*(?=(?:create|alter|drop|grant|revoke|comment|insert|update|delete|select|do|call|truncate|begin|commit)\b)/i;

/**
 * Where the statement after a routine's dollar-quoted body starts when no `;` ends the routine: the first line
 * that begins a statement, with only the routine's options (words, quoted names, `=`, commas, numbers) between.
 */
function statementAfterRoutine(text: string, end: number): number | undefined {
  const rest = text.slice(end, end + 2000);
  const found = NEXT_STATEMENT.exec(rest);
  if (!found) return undefined;
  const between = asParsed(rest.slice(0, found.index));
  if (!/^[\s\w'".,=()-]*$/.test(between)) return undefined;
  return end + found.index + found[0].length;
}

function startsStatement(text: string, from: number): boolean {
  const rest = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/.exec(text.slice(from, from + 4096))?.[0].length ?? 0;
  return /^[A-Za-z]/.test(text.slice(from + rest, from + rest + 1));
}

/** At least two `-- query_name --` header lines: a procrastinate query file. */
function dashedNames(text: string): boolean {
  DASHED_NAMES.lastIndex = 0;
  return DASHED_NAMES.test(text) && DASHED_NAMES.test(text);
}

/** psycopg's %s and %(name)s in query files (aiosql's pyformat); %% is a percent sign. */
function pyformatAt(text: string, i: number, holes: Hole[]): number {
  if (text[i + 1] === '%') return i + 2;
  if (text[i + 1] === 's' && !isIdentChar(text.charCodeAt(i + 2))) {
    holes.push({ start: i, end: i + 2 });
    return i + 2;
  }
  if (text[i + 1] === '(') {
    const close = text.indexOf(')', i + 2);
    if (close > 0 && /^[A-Za-z_]\w*$/.test(text.slice(i + 2, close)) && text[close + 1] === 's') {
      holes.push({ start: i, end: close + 2, identifierText: quoteIdentifier(text.slice(i, close + 2)) });
      return close + 2;
    }
  }
  return i + 1;
}

/** Words after which a value comes: a `?` there is a placeholder, not jsonb's `?` between two operands. */
const BEFORE_VALUE = new Set(['and', 'or', 'not', 'in', 'is', 'like', 'ilike', 'between', 'limit', 'offset', 'then', 'else', 'when', 'case', 'select', 'values', 'set', 'by', 'return', 'returning', 'distinct', 'any', 'all', 'some', 'from', 'where', 'having', 'on', 'using', 'to', 'as', 'with']);

/**
 * The `?` and `?NNN` placeholders of the drivers that number them for you (JDBC, sqlx and database/sql for MySQL
 * and SQLite, ODBC): a value. jsonb's `?` stands between two operands (`data ? 'k'`, `(a) ? b`), and `?|`, `?&`
 * are operators too: a `?` is a placeholder only where a value starts (after an operator, `(`, `,` or a keyword).
 */
function qmarkAt(text: string, i: number, holes: Hole[]): number {
  const next = text[i + 1];
  if (next === '|' || next === '&' || next === '?') return i + 2;
  let k = i - 1;
  while (k >= 0 && /\s/.test(text[k])) k--;
  const before = k < 0 ? '' : text[k];
  let value = k < 0 || '=<>!,(+-*/[%|'.includes(before);
  if (!value && isIdentChar(text.charCodeAt(k))) {
    let w = k;
    while (w > 0 && isIdentChar(text.charCodeAt(w - 1))) w--;
    value = BEFORE_VALUE.has(text.slice(w, k + 1).toLowerCase());
  }
  if (!value) return i + 1;
  let end = i + 1;
  while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
  holes.push({ start: i, end });
  return end;
}

/** The end of `"{{ ... }}"` (a template placeholder in double quotes) at `i`, or undefined. */
function quotedTemplateAt(text: string, i: number): number | undefined {
  if (text[i + 1] !== '{' || text[i + 2] !== '{') return undefined;
  const template = DOUBLE_BRACE.exec(text.slice(i + 1, i + 121));
  return template && text[i + 1 + template[0].length] === '"' ? i + 2 + template[0].length : undefined;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""').slice(0, 60)}"`;
}

/** A statement's text without its comments and psql meta-command lines, as the parser will see it. */
function asParsed(statement: string): string {
  return statement.replace(/--[^\n]*\n?/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/^[ \t]*\\[^\n]*$/gm, ' ');
}

/** The text with each edit blanked (its newlines kept) and, where it ends a statement, a `;` first. */
function applyEdits(text: string, edits: readonly { start: number; end: number; semicolon: boolean }[]): string {
  if (edits.length === 0) return text;
  let out = '';
  let last = 0;
  for (const edit of [...edits].sort((a, b) => a.start - b.start)) {
    const start = Math.max(edit.start, last);
    if (edit.end <= start) continue;
    out += text.slice(last, start);
    const blanked = text.slice(start, edit.end).replace(/[^\r\n]/g, ' ');
    out += edit.semicolon && start === edit.start ? `;${blanked.slice(1)}` : blanked;
    last = edit.end;
  }
  return out + text.slice(last);
}
