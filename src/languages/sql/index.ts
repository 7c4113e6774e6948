// .sql files: migrations, query files (pgtyped, sqlc, aiosql, yesql), psql
// scripts and function definitions. Top-level statements run as the tool that
// loads the file decides ('script'), statements between BEGIN and COMMIT in
// one transaction, and statements of function bodies in the caller's
// transaction. A psql script and a migration run on the connection their
// tool opens for them; a query file's statements on whatever connection the
// application passes.
import { emptyFileModel, type ConnectionUse, type Scope } from '../../model/index.ts';
import { lineIndexOf } from '../../model/lines.ts';
import { analyzeSql, transactionEffect } from '../../sql/index.ts';
import { collectLineComments } from '../comments.ts';
import { SQL_EXTENSIONS } from '../extensions.ts';
import type { FrontEnd } from '../types.ts';
import { foreignFile } from './dialect.ts';
import { readScript, type ScriptReading } from './script.ts';
import { extensionControlOf } from './extension-source.ts';
import { pgtapScriptIncluding } from './pgtap-suite.ts';
import { newerSyntaxAt, PARSER_POSTGRESQL } from './newer-syntax.ts';

export type DialectDetection = 'warn' | 'quiet' | 'off';

export const sqlFrontEnd: FrontEnd = {
  language: 'sql',
  extensions: SQL_EXTENSIONS,
  parse(text, file, options) {
    const model = emptyFileModel(file, 'sql', text);
    if (text.includes('\u0000')) {
      model.fatal = { message: 'Not a text file: it contains NUL bytes.', span: { start: 0, end: 0 } };
      return model;
    }
    model.comments = collectLineComments(text, '--');
    const reading = readScript(text, file);
    // A file a pgTAP script includes (`\ir fixtures.sql`) runs where that script runs: on psql's connection.
    const suite = reading.regression || reading.extension ? undefined : pgtapScriptIncluding(file);
    if (suite) {
      reading.regression = true;
      reading.psql = true;
      model.dependencies = [suite];
    }
    const control = reading.extension ? undefined : extensionControlOf(file);
    if (control) {
      reading.extension = true;
      model.dependencies = [...(model.dependencies ?? []), control];
    }
    // Only the statements that can carry a fact are parsed (a migration's CREATE INDEX, GRANT and COMMENT are not), except
    // in a function definition read from a database (`pgq-audit db`): its body's syntax is the point there.
    const onlyFacts = !options.sql?.parseEvery && !file.startsWith('db:');
    // A file's text is analysed once per scan: not kept for a next call (analyze.ts's memo is for host code's queries).
    let analysis = analyzeSql(reading.sql, { holes: reading.holes, onlyFacts, memo: false });
    // A file with a statement that does not parse is parsed whole, as the tool that runs it would: every statement that
    // does not parse is reported, and a file none of whose statements parses is one fatal message (or not PostgreSQL).
    if (analysis.errors.length > 0 && analysis.skipped) analysis = analyzeSql(reading.sql, { holes: reading.holes, memo: false });
    // CREATE EXTENSION runs its script with check_function_bodies off (extension.c): a body that does not compile is
    // created, and is not read here, as after `SET check_function_bodies = false`.
    if (reading.extension && analysis.errors.some((error) => /^(?:PL\/pgSQL|SQL) body of /.test(error.message))) {
      const kept = analysis.errors.filter((error) => !/^(?:PL\/pgSQL|SQL) body of /.test(error.message));
      analysis = { ...analysis, errors: kept, skipped: (analysis.skipped ?? 0) + analysis.errors.length - kept.length };
    }
    // A statement that fails where the script turned ON_ERROR_STOP off fails on purpose (a regression test of an error).
    const expected = reading.errorsExpected;
    if (expected && analysis.errors.length > 0) {
      analysis = { ...analysis, errors: analysis.errors.filter((error) => !expected.some((r) => error.span.start >= r.start && error.span.start < r.end)) };
    }

    const detection: DialectDetection = options.sql?.dialectDetection ?? 'warn';
    if (analysis.errors.length > 0 && detection !== 'off') {
      const foreign = foreignFile(text, file, analysis.errors.some((error) => !/^(?:PL\/pgSQL|SQL) body of /.test(error.message)));
      if (foreign) {
        // Not PostgreSQL: none of its statements is analysed, the parse errors are not the user's.
        if (foreign.config) model.dependencies = [...(model.dependencies ?? []), foreign.config].sort();
        if (detection === 'warn') {
          const { line } = lineIndexOf(text).position(foreign.at);
          const why = !foreign.folder
            ? `${foreign.sign} at line ${line}`
            : foreign.sign.endsWith('/') ? `it does not parse as PostgreSQL, in a folder named ${foreign.sign}`
              : foreign.sign.startsWith('.') ? `it does not parse as PostgreSQL, and its name has ${foreign.sign}` : `it does not parse as PostgreSQL, and ${foreign.sign} says so`;
          model.skipped = {
            message: `File skipped: it is ${foreign.kind}, not PostgreSQL (${why}); pgq-audit reads PostgreSQL only. Add it to "ignores", or set "sql": { "dialectDetection": "quiet" } to skip such files silently.`,
            span: { start: foreign.at, end: foreign.at },
          };
        }
        return model;
      }
    }
    // A statement in a newer PostgreSQL's syntax is valid where the file runs: a note that it was not read, no parse error.
    const newer = analysis.errors.length > 0 ? analysis.errors.map((error) => newerSyntaxAt(reading.sql, error.span.start)) : [];
    if (newer.some((n) => n)) {
      const notRead = analysis.errors.flatMap((error, k) => (newer[k] ? [{ error, newer: newer[k]! }] : []));
      const [first] = notRead;
      const { line } = lineIndexOf(text).position(first.error.span.start);
      const more = notRead.length - 1;
      model.notRead = {
        message: `Not read: ${first.newer.what} (line ${line}${more > 0 ? ` and ${more} more statement${more > 1 ? 's' : ''}` : ''}) is PostgreSQL ${first.newer.version} syntax; pgq-audit parses PostgreSQL ${PARSER_POSTGRESQL}, so what ${notRead.length > 1 ? 'these statements do was' : 'it does was'} not checked.`,
        span: first.error.span,
      };
      analysis = { ...analysis, errors: analysis.errors.filter((_, k) => !newer[k]) };
    }
    model.sqlErrors = analysis.errors;
    if (analysis.errors.length > 0 && !file.startsWith('db:')) model.parseErrorHint = readAsHint(reading);

    const connection: ConnectionUse = reading.psql || reading.migration ? { kind: 'dedicated' } : { kind: 'unknown' };
    const form = reading.migration ? `${reading.migration} migration` : reading.psql ? 'psql script' : 'BEGIN';
    let transaction: Scope | undefined;
    let transactions = 0;
    // A DO block or procedure that commits (PL/pgSQL COMMIT, ROLLBACK) starts a new transaction after it: per body,
    // how many it has ended before the statement, and where its last statement ended.
    const bodies = new Map<string, { ended: number; last: number }>();
    for (const statement of analysis.statements) {
      const effect = statement.routine ? 'none' : transactionEffect(statement);
      if (effect === 'opens') {
        transactions++;
        transaction = { kind: 'transaction', id: `${file}#tx${transactions}`, form, rollsBackOnError: true };
      }
      // A named query of a query file runs where the application runs it.
      let scope: Scope = transaction ?? (reading.queries ? { kind: 'unknown' } : { kind: 'script' });
      if (statement.routine) {
        const key = `${statement.routine.kind} ${statement.routine.name}`;
        const body = bodies.get(key) ?? { ended: 0, last: statement.span.start };
        if (endsTransaction(text.slice(body.last, statement.span.start))) body.ended++;
        body.last = statement.span.end;
        bodies.set(key, body);
        const id = `${file}#${statement.routine.name}${body.ended > 0 ? `#${body.ended}` : ''}`;
        scope = { kind: 'transaction', id, form: `${statement.routine.kind} body`, rollsBackOnError: true };
      }
      // A DO block runs where it stands; a function or procedure body where it is called: for one a regression script
      // defines, in the test's own database, where only the test's scripts call it on psql's connection.
      const runsHere = !statement.routine || statement.routine.kind === 'do' || reading.regression === true;
      model.sites.push({
        span: statement.span,
        analysis: { statements: [statement], errors: [] },
        scope,
        connection: runsHere ? connection : { kind: 'unknown' },
        driver: 'sql',
        ...(reading.migration && runsHere && reading.regression !== true ? { runsOnce: true } : {}),
      });
      if (effect === 'ends') transaction = undefined;
      else if (effect === 'ends-and-opens') {
        transactions++;
        transaction = { kind: 'transaction', id: `${file}#tx${transactions}`, form, rollsBackOnError: true };
      }
    }
    if (analysis.errors.length > 0 && analysis.statements.length === 0) {
      const first = analysis.errors[0];
      model.fatal = { message: `Parsing error: ${first.message}${model.parseErrorHint ? `. ${model.parseErrorHint}` : ''}`, span: first.span };
    }
    return model;
  },
};

/**
 * PL/pgSQL's COMMIT or ROLLBACK (with AND [NO] CHAIN) among the code between two statements of a body: the next
 * statement runs in a new transaction. Read in source order, so a COMMIT in one branch of an IF counts for the code
 * after the IF too: what follows is not reported rather than reported wrongly.
 */
function endsTransaction(between: string): boolean {
  if (!/commit|rollback/i.test(between)) return false;
  const code = between.replace(/'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\//g, ' ');
  return /(?:^|[;\s])(?:commit|rollback)(?:\s+and\s+(?:no\s+)?chain)?\s*;/i.test(code);
}

/** What the file was read as, for its parse error: the user sees whether the tool that runs it was recognised. */
function readAsHint(reading: ScriptReading): string {
  const what = reading.queries
    ? `${/^[aeiou]/.test(reading.queries) ? 'an' : 'a'} ${reading.queries} query file`
    : reading.migration
      ? reading.migration === 'migrations folder' ? 'a migration' : `a ${reading.migration} migration`
      : reading.psql ? 'a psql script' : 'plain PostgreSQL';
  return `Read as ${what}; if the tool that runs this file reads it differently, add the file to "ignores"`;
}
