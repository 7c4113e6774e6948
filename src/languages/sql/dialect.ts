// .sql files that are not PostgreSQL: templates (Jinja/dbt, Go text/template)
// and other databases' SQL (SQLite, MySQL, BigQuery, ClickHouse, T-SQL, Oracle). Asked only about a
// file whose statements do not parse, so a PostgreSQL file that merely
// mentions PRAGMA in a comment is never skipped.

import { basename, dirname, join } from 'node:path';
import { readConfigText } from '../../read-file.ts';
import { parsePlPgSql } from '../../sql/parser.ts';
import { templateIncluding } from './template-include.ts';

export interface ForeignFile {
  /** What the file is, for the message: "a Jinja/dbt template", "MySQL". */
  kind: string;
  /** The first sign of it, e.g. "AUTO_INCREMENT". */
  sign: string;
  /** Offset of the sign in the text. */
  at: number;
  /** The sign is where the file is (its folder `mysql/`, a sqlc config beside it), not its text. */
  folder?: boolean;
  /** The config file the sign was read from (the model depends on it). */
  config?: string;
}

interface Sign {
  kind: string;
  pattern: RegExp;
  /** How the message shows the match; the match itself by default. */
  show?: (match: RegExpExecArray) => string;
}

/** A sign that spans lines, shown on one. */
const oneLine = (match: RegExpExecArray): string => match[0].trim().replace(/\s+/g, ' ');

const TEMPLATE_SIGNS: Sign[] = [
  // A function applied to a field (`{{ identifier .Table }}`, `{{ printf "%s" .X }}`): a space then a dot is no Jinja.
  // The action is shown to its `}}` when that is on its line.
  { kind: 'a Go template', pattern: /\{\{-?\s*(?:\.|\$|range\b|end\b|if\s+\.|define\b|template\b|block\b|with\s+\.|\/\*|[A-Za-z_]\w*(?:\s+"[^"\n]*")*\s+\$?\.[A-Za-z_])(?:[^}\n]*\}\})?/ },
  { kind: 'a Jinja/dbt template', pattern: /\{\{[\s\S]*?\}\}|\{%-?\s*\w+[\s\S]*?%\}|\{#[\s\S]*?#\}/ },
];

/**
 * ClickHouse's own syntax. Its backticks and `ENGINE =` are MySQL's too, so these are looked for first,
 * in the whole file: a ClickHouse migration that quotes a name before its first MergeTree is still ClickHouse.
 */
const CLICKHOUSE_SIGNS: Sign[] = [
  { kind: 'ClickHouse', pattern: /\bENGINE\s*=\s*(?:\w*MergeTree|Memory|TinyLog|StripeLog|Log|Kafka|Distributed|Null|Buffer|Dictionary|Join|Set)\b/i },
  { kind: 'ClickHouse', pattern: /\bCODEC\s*\(/i },
  { kind: 'ClickHouse', pattern: /\bCREATE\s+MATERIALIZED\s+VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?[\w."]+\s+TO\s+[\w."]+/i },
  { kind: 'ClickHouse', pattern: /\bMODIFY\s+(?:QUERY|TTL|SETTING|ORDER\s+BY)\b/i },
  // Mutations: ALTER TABLE t UPDATE c = ... WHERE ..., ALTER TABLE t DELETE WHERE ... (PostgreSQL has neither).
  { kind: 'ClickHouse', pattern: /\bALTER\s+TABLE\s+[\w."]+\s+(?:UPDATE\s+[\w"]+\s*=|DELETE\s+WHERE\b)/i, show: oneLine },
  // Its privileges on mutations (`GRANT ALTER DELETE ON db.* TO role`): PostgreSQL grants no ALTER but ALTER SYSTEM.
  { kind: 'ClickHouse', pattern: /\bGRANT\s+(?:[\w\s(),]+,\s*)?ALTER\s+(?:DELETE|UPDATE)\b/i, show: oneLine },
  // Its column types are case-sensitive CamelCase words PostgreSQL has no type for, after a column's name.
  { kind: 'ClickHouse', pattern: /\b[A-Za-z_]\w*\s+(?:(?:Nullable|LowCardinality|DateTime64|FixedString)\s*\(|(?:U?Int(?:8|16|32|64|128|256)|Float(?:32|64)|String)(?=[\s,)]|$))/m },
];

const DIALECT_SIGNS: Sign[] = [
  // BigQuery quotes a whole `project.dataset.table` path in one pair of backticks (MySQL quotes each name: `db`.`t`),
  // and has types PostgreSQL has not. Before MySQL's backticks, which would match first.
  { kind: 'BigQuery', pattern: /`[A-Za-z][\w-]*\.[\w-]+(?:\.[\w-]+)?`/ },
  { kind: 'BigQuery', pattern: /\b(?:INT64|FLOAT64|BIGNUMERIC)\b|\b(?:ARRAY|STRUCT)<\s*[A-Z]/i },
  { kind: 'MySQL', pattern: /`[^`\n]+`/ },
  { kind: 'MySQL', pattern: /\bAUTO_INCREMENT\b/i },
  // A column placed AFTER another (MySQL's and ClickHouse's; PostgreSQL appends every new column).
  { kind: 'MySQL', pattern: /\bADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?[\w"]+\s+[^;,]{1,80}?\s(?:AFTER\s+[\w"`]+|FIRST)\s*(?:[;,]|$)/im, show: oneLine },
  { kind: 'MySQL', pattern: /\bENGINE\s*=\s*\w+/i },
  { kind: 'MySQL', pattern: /^\s*DELIMITER\s+\S+/im },
  { kind: 'MySQL', pattern: /\/\*!\d{5}/ },
  { kind: 'MySQL', pattern: /\bint(?:eger)?(?:\(\d+\))?\s+unsigned\b/i },
  // Every table of a database (`GRANT SELECT ON shop.* TO ...`) and a user's password by IDENTIFIED BY: MySQL's
  // (ClickHouse's too, whose own signs come first). PostgreSQL grants ON ALL TABLES IN SCHEMA and says WITH PASSWORD.
  { kind: 'MySQL', pattern: /\bON\s+[\w`"]+\.\*\s+TO\b/i, show: oneLine },
  { kind: 'MySQL', pattern: /\bCREATE\s+USER\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+IDENTIFIED\s+(?:BY|WITH)\b/i },
  { kind: 'SQLite', pattern: /^\s*PRAGMA\s+\w+/im },
  { kind: 'SQLite', pattern: /\bAUTOINCREMENT\b/i },
  { kind: 'SQLite', pattern: /\bWITHOUT\s+ROWID\b/i },
  { kind: 'SQLite', pattern: /\bINSERT\s+OR\s+(?:IGNORE|REPLACE|ABORT|FAIL|ROLLBACK)\b/i },
  { kind: 'T-SQL', pattern: /^\s*GO\s*(?:\d+\s*)?$/im, show: () => 'GO' },
  { kind: 'T-SQL', pattern: /\[dbo\]/i },
  { kind: 'T-SQL', pattern: /\bIDENTITY\s*\(\s*\d+\s*,\s*\d+\s*\)/i },
  { kind: 'T-SQL', pattern: /\bSET\s+(?:ANSI_NULLS|QUOTED_IDENTIFIER|NOCOUNT|XACT_ABORT)\s+ON\b/i },
  { kind: 'T-SQL', pattern: /\bN?VARCHAR\s*\(\s*MAX\s*\)/i },
  { kind: 'Oracle', pattern: /\bVARCHAR2\b/i },
  { kind: 'Oracle', pattern: /\bCREATE\s+(?:OR\s+REPLACE\s+)?PACKAGE\b/i },
];

/** Blanks comments and string literals (keeping offsets), so a sign inside them does not count. */
function codeOnly(text: string): string {
  return text.replace(/--[^\n]*|\/\*(?!!\d)[\s\S]*?\*\/|'(?:[^']|'')*'/g, (m) => m.replace(/[^\n]/g, ' '));
}

/**
 * Folders named after another database: repositories that target several (sqlc's `testdata/<case>/mysql/`,
 * an ORM's `migrations/sqlite/`) keep each database's files apart, and a file there that does not parse as
 * PostgreSQL is that database's, even where its text shows no sign of it (`UPDATE a JOIN b ... SET a.x = b.x`).
 */
const FOLDER_DIALECTS: Record<string, string> = {
  mysql: 'MySQL',
  mariadb: 'MariaDB',
  sqlite: 'SQLite',
  sqlite3: 'SQLite',
  mssql: 'T-SQL',
  sqlserver: 'T-SQL',
  tsql: 'T-SQL',
  oracle: 'Oracle',
  clickhouse: 'ClickHouse',
  bigquery: 'BigQuery',
  googlesql: 'GoogleSQL',
  spanner: 'GoogleSQL',
  snowflake: 'Snowflake',
  duckdb: 'DuckDB',
  cockroach: 'CockroachDB',
  cockroachdb: 'CockroachDB',
  crdb: 'CockroachDB',
};

/** `topLevel`: a statement of the file itself did not parse (not only a routine's body). */
export function foreignFile(text: string, file?: string, topLevel = true): ForeignFile | undefined {
  // Template tags may sit in strings and comments too: look at the whole text.
  const template = firstSign(text, TEMPLATE_SIGNS);
  if (template) return template;
  const code = codeOnly(text);
  return firstSign(code, CLICKHOUSE_SIGNS, text) ?? firstSign(code, DIALECT_SIGNS, text) ?? (file ? nameSign(file) ?? folderSign(file) ?? sqlcEngine(file) ?? (topLevel ? includedFragment(text, file) : undefined) : undefined);
}

/**
 * A fragment another .sql file includes with a Jinja tag (template-include.ts): the includer is what runs. Only one
 * whose text is PL/pgSQL statements (`perform ...`, `if ... then`): a file of whole SQL statements parses alone, and
 * one that does not is the user's error (a CREATE FUNCTION with a broken body, included or not).
 */
function includedFragment(text: string, file: string): ForeignFile | undefined {
  const includer = templateIncluding(file);
  if (!includer || text.includes('$pgq_fragment$') || !parsePlPgSql(`DO $pgq_fragment$ BEGIN\n${text}\nEND $pgq_fragment$`).ok) return undefined;
  const tag = `${includer.tag} %}`;
  return { kind: 'a fragment of a Jinja template', sign: `the ${tag.length > 60 ? `${tag.slice(0, 57)}...` : tag} of ${basename(includer.file)}`, at: 0, folder: true, config: includer.file };
}

/** sqlc's config names the database each package's schema and queries are for (`"engine": "mysql"`). */
const SQLC_CONFIGS = ['sqlc.json', 'sqlc.yaml', 'sqlc.yml'];

/**
 * The engine of the nearest sqlc config in the file's folder or the two above it, when every package it declares
 * is for another database than PostgreSQL. Read only for a file that does not parse.
 */
function sqlcEngine(file: string): ForeignFile | undefined {
  let dir = dirname(file);
  for (let up = 0; up < 3; up++) {
    for (const name of SQLC_CONFIGS) {
      let config: string;
      try {
        config = readConfigText(join(dir, name));
      } catch {
        continue;
      }
      const engines = [...config.matchAll(/["']?engine["']?\s*:\s*["']?([A-Za-z]+)/g)].map((m) => m[1].toLowerCase());
      if (engines.length === 0 || engines.some((e) => e === 'postgresql' || e === 'postgres')) return undefined;
      const kind = FOLDER_DIALECTS[engines[0]];
      return kind ? { kind, sign: `${name} "engine": "${engines[0]}"`, at: 0, folder: true, config: join(dir, name) } : undefined;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/**
 * A database named by a dotted part of the file's name between its stem and its extension: migration tools that keep
 * one file per database side by side name them so (ory/pop's `20200101_users.mysql.up.sql`, `.cockroach.down.sql`,
 * `schema.sqlite3.sql`). A part that names PostgreSQL, or none, says nothing.
 */
function nameSign(file: string): ForeignFile | undefined {
  const parts = basename(file).split('.').slice(1, -1);
  for (const part of parts) {
    const kind = FOLDER_DIALECTS[part.toLowerCase()];
    if (kind) return { kind, sign: `.${part}.`, at: 0, folder: true };
  }
  return undefined;
}

/**
 * The nearest folder of the file's path named after another database, alone or as the first word of its name
 * (`mysql_reference_manual/`, `sqlite-migrations/`); the file's own name is not a folder.
 */
function folderSign(file: string): ForeignFile | undefined {
  const folders = file.split(/[\\/]/).slice(0, -1);
  for (let i = folders.length - 1; i >= 0; i--) {
    const kind = FOLDER_DIALECTS[folders[i].toLowerCase().replace(/[-_].*$/, '')];
    if (kind) return { kind, sign: `${folders[i]}/`, at: 0, folder: true };
  }
  return undefined;
}

function firstSign(text: string, signs: Sign[], original = text): ForeignFile | undefined {
  let best: ForeignFile | undefined;
  for (const sign of signs) {
    const match = sign.pattern.exec(text);
    if (!match) continue;
    const at = match.index + (match[0].length - match[0].trimStart().length);
    if (best && best.at <= at) continue;
    const shown = sign.show ? sign.show(match) : original.slice(at, match.index + match[0].length).trim();
    best = { kind: sign.kind, sign: shown.length > 40 ? `${shown.slice(0, 37)}...` : shown, at };
  }
  return best;
}
