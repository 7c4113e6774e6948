// Statements in syntax newer than the parser's: valid PostgreSQL, on a version pgq-audit cannot parse yet. A file
// keeps them where it targets that version too (a regression test run only on PostgreSQL 19, a migration of a
// project that requires it); that is no error of the file, so it is said as a note, not a parse error.

/** The PostgreSQL whose grammar libpg-query compiles (libpg-query 18.x is PostgreSQL 18's parser). */
export const PARSER_POSTGRESQL = 18;

interface NewerSign {
  version: number;
  what: string;
  pattern: RegExp;
}

/** Constructs PostgreSQL added after the parser's version, each as its own words in a statement that does not parse. */
const SIGNS: NewerSign[] = [
  { version: 19, what: 'ON CONFLICT ... DO SELECT', pattern: /\bON\s+CONFLICT\b[^;]*?\bDO\s+SELECT\b/i },
  { version: 19, what: 'REPACK', pattern: /^\s*REPACK\b/i },
  { version: 19, what: 'GROUP BY ALL', pattern: /\bGROUP\s+BY\s+ALL\s*(?:$|[;)]|\b(?:HAVING|ORDER|LIMIT|OFFSET|WINDOW|FETCH|FOR|UNION|INTERSECT|EXCEPT)\b)/i },
];

export interface NewerStatement {
  version: number;
  what: string;
}

/** The newer construct in the statement around `at` (from the `;` before it to the one after), if it has one. */
export function newerSyntaxAt(sql: string, at: number): NewerStatement | undefined {
  const start = sql.lastIndexOf(';', Math.max(0, at - 1)) + 1;
  const semicolon = sql.indexOf(';', at);
  const statement = sql.slice(start, semicolon < 0 ? sql.length : semicolon).replace(/--[^\n]*/g, ' ');
  for (const sign of SIGNS) if (sign.pattern.test(statement)) return { version: sign.version, what: sign.what };
  return undefined;
}
