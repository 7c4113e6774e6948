// ESLint sees one file: a function of that file (or a method of its class)
// handed the job's transaction runs its SQL in it, and is reported once, at
// its own SQL. A function of a module the file imports is read where the
// linted file is on disk beside that module (the finding is at the call); in
// a virtual file the import leads nowhere, so the caller holds no claim and
// the rules stay quiet rather than guess what the helper sends.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgqRule, ruleTester } from './rule-tester.ts';

const project = mkdtempSync(join(tmpdir(), 'pgq-eslint-helper-'));
writeFileSync(join(project, 'package.json'), '{"name":"helper-tx"}');
writeFileSync(
  join(project, 'store.ts'),
  `import type { Knex } from 'knex';
export async function takeNext(trx: Knex.Transaction) { return trx('jobs').where({ state: 'queued' }).forUpdate().skipLocked().first(); }
export async function countAttempt(trx: Knex.Transaction, id: number) { await trx.raw('update jobs set attempts = attempts + 1 where id = ?', [id]); }
export async function finish(trx: Knex.Transaction, id: number) { await trx('jobs').where({ id }).update({ state: 'done' }); }`,
);
const knexWorker = (from: string) => `import knex from 'knex';
import { takeNext, countAttempt, finish } from '${from}';
const db = knex({ client: 'pg' });
declare function work(id: number): Promise<void>;
export async function runOnce() {
  await db.transaction(async (trx) => {
    const job = await takeNext(trx);
    await countAttempt(trx, job.id);
    await work(job.id);
    await finish(trx, job.id);
  });
}`;

const service = (countWith: string, catchBody = 'throw error;') => `import { DataSource, EntityManager } from 'typeorm';
declare function render(id: number): Promise<void>;
export class DigestService {
  constructor(private readonly dataSource: DataSource) {}
  async runNext(): Promise<void> {
    let claimed: number | undefined;
    try {
      await this.dataSource.transaction(async (manager) => {
        const job = await this.lockNext(manager);
        if (!job) return;
        claimed = job.id;
        ${countWith}
        await render(job.id);
        await this.markDone(manager, job.id);
      });
    } catch (error) {
      ${catchBody}
    }
  }
  private async lockNext(manager: EntityManager) {
    const rows = await manager.query("select id from digests where state = 'queued' and attempts < 5 order by id limit 1 for update skip locked");
    return rows[0];
  }
  private async count(manager: EntityManager, id: number) {
    await manager.query('update digests set attempts = attempts + 1 where id = $1', [id]);
  }
  private async markDone(manager: EntityManager, id: number) {
    await manager.query("update digests set state = 'done' where id = $1", [id]);
  }
}`;

ruleTester.run('no-attempts-in-rollback-scope', pgqRule('no-attempts-in-rollback-scope'), {
  valid: [
    // The failure is counted by the method handed the data source's own manager, after the rollback.
    service('', 'if (claimed !== undefined) await this.count(this.dataSource.manager, claimed);\n      throw error;'),
    // The queue's functions are another module's, which the virtual file cannot read: nothing is claimed here.
    knexWorker('./not-on-disk'),
  ],
  invalid: [
    {
      // The method handed the job's manager counts in the job's transaction: once, at its UPDATE.
      code: service('await this.count(manager, job.id);'),
      errors: [{ messageId: 'rolledBack', line: 25 }],
    },
    {
      // The file on disk beside the queue module: the module's count runs in the worker's transaction, reported at the call.
      code: knexWorker('./store'),
      filename: join(project, 'worker.ts'),
      errors: [{ messageId: 'rolledBack', line: 8 }],
    },
  ],
});

ruleTester.run('no-side-effects-in-locking-transaction', pgqRule('no-side-effects-in-locking-transaction'), {
  // The mail is sent in the catch, after the transaction that held the lock has rolled back.
  valid: [service('', 'await mailer.sendMail({ to: String(claimed) });\n      throw error;').replace('declare function render', 'declare const mailer: { sendMail(m: unknown): Promise<void> };\ndeclare function render')],
  invalid: [
    {
      // The lock is the method's, handed the manager: the mail after it is sent under that lock.
      code: service('await mailer.sendMail({ to: String(job.id) });').replace('declare function render', 'declare const mailer: { sendMail(m: unknown): Promise<void> };\ndeclare function render'),
      errors: [{ messageId: 'sideEffect' }],
    },
  ],
});
