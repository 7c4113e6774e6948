// libpg-query (the real PostgreSQL parser compiled to wasm) loads
// asynchronously; everything after loadSqlParser() is synchronous.
import { loadModule, parsePlPgSQLSync, parseSync } from 'libpg-query';
import type { Node } from './extract.ts';

let loaded: Promise<void> | undefined;
let ready = false;

export function loadSqlParser(): Promise<void> {
  loaded ??= loadModule().then(() => {
    ready = true;
  });
  return loaded;
}

function assertReady(): void {
  if (!ready) throw new Error('pgq-audit: call `await loadSqlParser()` before analysing SQL');
}

export interface ParsedStatement {
  stmt: Node;
  /** Byte offsets into the parsed text. */
  location: number;
  length: number | undefined;
}

export type ParseResult = { ok: true; statements: ParsedStatement[] } | { ok: false; message: string; cursorByte: number };

export function parseStatements(sql: string): ParseResult {
  assertReady();
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
  assertReady();
  try {
    const tree = parsePlPgSQLSync(sql) as { plpgsql_funcs?: Node[] };
    return { ok: true, functions: tree.plpgsql_funcs ?? [] };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}
