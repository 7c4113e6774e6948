// libpg-query (the real PostgreSQL parser compiled to wasm) loads
// asynchronously; everything after loadSqlParser() is synchronous. The module
// itself is imported there too: a scan that analyses no file (every file from
// the cache, or none past the prefilter) does not load it.
import type { Node } from './extract.ts';

type PgQuery = typeof import('libpg-query');

let loaded: Promise<void> | undefined;
let pgQuery: PgQuery | undefined;

export function loadSqlParser(): Promise<void> {
  loaded ??= import('libpg-query').then(async (module) => {
    await module.loadModule();
    pgQuery = module;
  });
  return loaded;
}

function ready(): PgQuery {
  if (!pgQuery) throw new Error('pgq-audit: call `await loadSqlParser()` before analysing SQL');
  return pgQuery;
}

export interface ParsedStatement {
  stmt: Node;
  /** Byte offsets into the parsed text. */
  location: number;
  length: number | undefined;
}

export type ParseResult = { ok: true; statements: ParsedStatement[] } | { ok: false; message: string; cursorByte: number };

export function parseStatements(sql: string): ParseResult {
  const { parseSync } = ready();
  try {
    const tree = parseSync(sql) as { stmts?: Node[] };
    const statements = (tree.stmts ?? []).map((s) => ({
      stmt: s.stmt as Node,
      location: (s.stmt_location as number | undefined) ?? 0,
      length: s.stmt_len as number | undefined,
    }));
    return { ok: true, statements };
  } catch (error) {
    const details = (error as { sqlDetails?: { cursorPosition?: number } }).sqlDetails;
    return { ok: false, message: (error as Error).message, cursorByte: details?.cursorPosition ?? 0 };
  }
}

/** The PL/pgSQL tree of a CREATE FUNCTION/PROCEDURE or DO statement, or the parser's message. */
export function parsePlPgSql(sql: string): { ok: true; functions: Node[] } | { ok: false; message: string } {
  const { parsePlPgSQLSync } = ready();
  try {
    const tree = parsePlPgSQLSync(sql) as { plpgsql_funcs?: Node[] };
    return { ok: true, functions: tree.plpgsql_funcs ?? [] };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}
