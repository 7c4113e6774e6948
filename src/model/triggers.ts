// Prefilter triggers shaped like the SQL statements the rules read. Bare words
// ('update', 'delete', 'set ') are in most source files ("update the cache",
// map.delete()) and let nearly every file through to the parser; these let
// through only files that can hold such a statement. A trigger may miss
// nothing a front end can read: the gaps between words also take the \n
// escapes of string literals and the seams of concatenated strings
// ('update jobs ' + 'set ...', Python's implicit "..." "..." concatenation).

import type { LanguageTrigger } from './rule.ts';

const GAP = String.raw`(?:\s|\\[nrt]|['"\x60]\s*\+?\s*['"\x60])+`;
/** The table of UPDATE ... SET: a name, a template hole or a placeholder, with an alias. */
const TARGET = String.raw`[^;]{1,160}?`;

/**
 * The same statements written with a query builder, which the TS front end
 * reads as the SQL they send: Drizzle `.update(jobs).set(`, Kysely
 * `.updateTable(`, Knex `.update({` / `.increment(`, Prisma `.update({` /
 * `.updateMany({`; Kysely `.deleteFrom(`, Drizzle `.delete(jobs)`, Knex
 * `.del()`, Prisma `.delete({` / `.deleteMany({`.
 */
const BUILDER_UPDATE = String.raw`\.update\s*\([^;]{0,160}?\)\s*\.set\s*\(|\.updateTable\s*\(|\.update(?:Many)?\s*\(\s*\{|\.(?:increment|decrement)\s*\(`;
const BUILDER_DELETE = String.raw`\.deleteFrom\s*\(|\.delete\s*\(\s*\w+\s*\)\s*\.(?:where|returning)\s*\(|\.del\s*\(\s*\)|\.delete(?:Many)?\s*\(\s*\{`;
/**
 * In Python `.update({` is a dict's update (`self.cache.update({key: value})`, in most modules):
 * the Python front end reads it as SQL only at the end of SQLAlchemy's `session.query(Job)...`
 * chain, so there the trigger is that chain. The rest of the builder shapes are kept as they are.
 */
const PYTHON_BUILDER_UPDATE = String.raw`\.update\s*\([^;]{0,160}?\)\s*\.set\s*\(|\.updateTable\s*\(|\.query\s*\([^;]{0,600}?\.update\s*\(\s*\{|\.(?:increment|decrement)\s*\(`;

const UPDATE_TEXT = String.raw`update${GAP}${TARGET}${GAP}set(?:\s|\\[nrt]|['"\x60])`;
const DELETE_TEXT = String.raw`delete${GAP}from`;

/** UPDATE ... SET as SQL text, and the builder calls each front end reads as one. */
export const UPDATE_SET: LanguageTrigger = {
  byLanguage: {
    sql: new RegExp(UPDATE_TEXT, 'i'),
    typescript: new RegExp(`${UPDATE_TEXT}|${BUILDER_UPDATE}`, 'i'),
    python: new RegExp(`${UPDATE_TEXT}|${PYTHON_BUILDER_UPDATE}`, 'i'),
  },
};
export const DELETE_FROM = new RegExp(String.raw`${DELETE_TEXT}|${BUILDER_DELETE}`, 'i');
export const INSERT_INTO = new RegExp(String.raw`insert${GAP}into`, 'i');
/** INSERT ... SELECT: a statement that copies rows (a retry enqueued as a new row). */
export const INSERT_SELECT = new RegExp(String.raw`insert${GAP}into${GAP}[^;]{1,600}?(?:\s|\\[nrt]|['"\x60(])select(?:\s|\\[nrt]|['"\x60])`, 'i');
/**
 * CREATE TABLE with an attempt-limit column (`max_tries`, `retry_limit`): the queue rules name the table's own counter
 * and limit in their messages, from a schema file that holds no statement of theirs. Only SQL's own DDL is read so.
 */
export const CREATE_LIMITED_TABLE: LanguageTrigger = {
  byLanguage: { sql: new RegExp(String.raw`create${GAP}(?:\w+${GAP}){0,2}table${GAP}[^;]*(?:max_\w|\w_limit)`, 'i') },
};
export const MERGE_INTO = new RegExp(String.raw`merge${GAP}into`, 'i');
/** DISCARD ALL and DEALLOCATE [PREPARE] ALL: the word alone is in comments and UIs ("discard changes"). */
export const DISCARD_ALL = new RegExp(String.raw`discard${GAP}all|deallocate${GAP}(?:prepare${GAP})?all`, 'i');
/** SET [LOCAL|SESSION] name = | TO, SET ROLE, SET SESSION AUTHORIZATION. */
export const SET_STATEMENT = new RegExp(
  String.raw`set${GAP}(?:(?:local|session)${GAP})?(?:role${GAP}|session${GAP}authorization|[^\s;]+(?:\s|\\[nrt])*(?:=|to(?:\s|\\[nrt])))`,
  'i',
);

/**
 * A transaction TS/JS code opens: a driver's callback (`db.transaction(`, Prisma's `$transaction(`,
 * postgres.js `sql.begin(`), TypeORM's `startTransaction(`, or BEGIN as text. A file that opens one and
 * hands it to project functions runs their SQL in it (the front end walks them at the call), though its
 * own text holds none.
 */
export const TRANSACTION_OPENED: LanguageTrigger = {
  byLanguage: { typescript: /\.\$?(?:transaction|begin|starttransaction)\s*\(|['"\x60]\s*(?:begin|start\s+transaction)/i },
};
