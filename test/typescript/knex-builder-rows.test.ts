// Knex chains the walk half resolves, and what the code around an update says
// of its rows (drivers/knex-builder.ts): a wrapper from an unread module given
// a Knex value runs on it; a builder held in a const and continued is one
// query; where groups are parenthesised; `col: Number(row.col) + 1` counts;
// an exit on the row's count before the update limits it, an update inside
// that test takes the rows at the limit. And the row's own id by the table's
// name (queue-columns.ts isRowId).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { isRowId } from '../../src/model/queue-columns.ts';

before(() => loadSqlParser());

const show = (c: { column: string; op: string; underOr?: boolean }) => `${c.column} ${c.op}${c.underOr ? ' (or)' : ''}`;
const statementsOf = (text: string) =>
  typescriptFrontEnd.parse(text, '/virtual/sends.ts', {}).sites.flatMap((s) =>
    s.analysis.statements.flatMap((st) => [
      ...st.rowWrites.map((w) => `${s.scope.kind} ${w.op} ${w.table} SET ${w.assignments.map((a) => `${a.column}=${a.value.kind}`).join(',')} WHERE ${w.where.map(show).join(' & ')}`),
      ...st.lockingReads.map((r) => `${s.scope.kind} lock ${r.tables.join(',')}${r.skipLocked ? ' skip' : ''} WHERE ${r.where.map(show).join(' & ')}`),
    ]),
  );

const header = `import type { Knex } from 'knex';
import { scoped } from '@acme/tenancy';
import { MAX_TRIES } from '@acme/sends';
`;

test('a wrapper from an unread module given a Knex transaction runs its table() chains in that transaction', () => {
  assert.deepEqual(
    statementsOf(`${header}
export async function finish(knex: Knex, tenant: string, id: string) {
  await knex.transaction(async (trx) => {
    const db = scoped(trx, tenant);
    await db.table('sends').where({ send_id: id }).update({ status: 'sent' });
  });
}
export async function notKnex(tenant: string, id: string, other: unknown) {
  const db = scoped(other, tenant);
  await db.table('sends').where({ send_id: id }).update({ status: 'sent' });
}`),
    ['transaction update sends SET status=literal WHERE send_id ='],
  );
});

test('a builder held in a const and continued is one locking read, with its where groups in parentheses', () => {
  assert.deepEqual(
    statementsOf(`${header}
export async function pick(knex: Knex, tenant: string) {
  return knex.transaction(async (trx) => {
    const q = trx.table('sends as s').select('s.send_id');
    q.where('s.tenant', tenant)
      .andWhere((qb) => {
        qb.whereNull('s.leased_until').orWhere('s.leased_until', '<', new Date().toISOString());
      })
      .limit(10)
      .forUpdate()
      .skipLocked();
    q.whereNotIn('s.send_id', ['a']);
    return await q;
  });
}`),
    ['transaction lock sends skip WHERE tenant = & leased_until is null (or) & leased_until < (or)'],
  );
});

test("a column written back as the row's value plus one counts it; an exit on that count before the update limits it", () => {
  assert.deepEqual(
    statementsOf(`${header}
export async function claim(knex: Knex, rows: { send_id: string; tries: number; other: number }[]) {
  await knex.transaction(async (trx) => {
    for (const row of rows) {
      const next = Number(row.tries) + 1;
      if (next > MAX_TRIES) {
        await trx.table('sends').where({ send_id: row.send_id }).update({ status: 'dead' });
        continue;
      }
      await trx.table('sends').where({ send_id: row.send_id }).update({ status: 'active', tries: next });
      await trx.table('sends').where({ send_id: row.send_id }).update({ tries: row.other + 1 });
    }
  });
}
export async function noExit(knex: Knex, row: { send_id: string; tries: number }) {
  const next = row.tries + 1;
  if (next > MAX_TRIES) console.warn('over');
  await knex.table('sends').where({ send_id: row.send_id }).update({ tries: next });
}`),
    [
      'transaction update sends SET status=literal WHERE send_id = & tries >=',
      'transaction update sends SET status=literal,tries=increment WHERE send_id = & tries <',
      'transaction update sends SET tries=param WHERE send_id =',
      // On a parameter typed Knex: a Knex.Transaction is one too, so the callers decide the transaction.
      'unknown update sends SET tries=increment WHERE send_id =',
    ],
  );
});

test("the row's own id: an id by name, or the table's last word in the singular with _id", () => {
  assert.ok(isRowId('delivery_id', 'prepaid_alert_deliveries'));
  assert.ok(isRowId('run_id', 'billing.runs'));
  assert.ok(isRowId('box_id', 'mail_boxes'));
  assert.ok(isRowId('id', 'anything'));
  assert.ok(!isRowId('tenant_id', 'jobs'));
  assert.ok(!isRowId('alert_id', 'alert_deliveries'));
});

test('a const that holds a whole query is read once, where it is made; a test of a collection size limits nothing', () => {
  assert.deepEqual(
    statementsOf(`${header}
export async function finish(knex: Knex, id: string, rows: unknown[]) {
  const done = knex.table('sends').where({ send_id: id }).update({ status: 'sent' });
  await done.then(() => undefined);
  if (rows.length > 0) {
    await knex.table('sends').where({ send_id: id }).update({ status: 'seen' });
  }
}`),
    ['unknown update sends SET status=literal WHERE send_id =', 'unknown update sends SET status=literal WHERE send_id ='],
  );
});
