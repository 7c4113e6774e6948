// Faults during the check: the backend is terminated, the server goes away
// and comes back, the check never gets an answer. In each case the checkout
// rejects with the driver's error (never a TenantLeakError), the connection
// is destroyed, and the pool serves the next job. A TCP proxy decides when
// the client hears of a real fault, so the fault lands on the check query
// itself instead of racing it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestDatabase, WORKER_ROLE, type TestDatabase } from '../helpers/db.ts';
import { guardPool, guardStats, TenantLeakError, type GuardOptions } from '../../src/guard/index.ts';
import { PgProxy, seeded } from './support.ts';
import { waitUntil } from '../helpers/wait.ts';

let db: TestDatabase;
let owner: pg.Client;
let probeSql: string;
before(async () => {
  db = await startTestDatabase();
  owner = new pg.Client({ connectionString: db.ownerUrl });
  await owner.connect();
  // The first invoice of each tenant: shows which tenants a job can see
  // with 100 index lookups instead of a scan under RLS.
  const { rows } = await owner.query<{ id: string }>('select min(id) as id from invoices group by tenant_id');
  probeSql = `select coalesce(array_agg(tenant_id), '{}') as tenants from invoices where id = any('{${rows.map((r) => r.id).join(',')}}'::bigint[])`;
});
after(async () => {
  await owner.end();
  await db.stop();
});

async function withProxy(fn: (proxy: PgProxy) => Promise<void>): Promise<void> {
  const proxy = await PgProxy.start(db.workerUrl);
  try {
    await fn(proxy);
  } finally {
    await proxy.close();
  }
}

function guardedVia(proxy: PgProxy, max: number, options: Partial<GuardOptions> = {}, jobsListen = true): pg.Pool {
  const pool = guardPool(new pg.Pool({ connectionString: proxy.url(db.workerUrl), max }), {
    settings: ['app.tenant'],
    // The faults are put on the check query: every checkout must run it, clean jobs before it or not.
    elide: false,
    ...options,
  });
  pool.on('error', () => {}); // idle clients that die are removed by pg-pool; nothing to do
  // A job's client can be terminated between two of its queries: node-postgres
  // then emits 'error' on the checked-out client, which a worker must handle.
  if (jobsListen) pool.on('connect', (client: pg.PoolClient) => client.on('error', () => {}));
  return pool;
}

async function countRows(pool: pg.Pool, tenant: number): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    const { rows } = await client.query<{ n: string }>('select count(*) as n from invoices');
    await client.query('commit');
    client.release();
    return Number(rows[0]!.n);
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
}

async function visibleTenants(pool: pg.Pool, tenant: number): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query("select set_config('app.tenant', $1, true)", [String(tenant)]);
    const { rows } = await client.query<{ tenants: number[] }>(probeSql);
    await client.query('commit');
    client.release();
    return rows[0]!.tenants;
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
}

function backendPid(pool: pg.Pool): number {
  const clients = (pool as unknown as { _clients: Array<{ processID: number }> })._clients;
  assert.equal(clients.length, 1);
  return clients[0]!.processID;
}

test('pg_terminate_backend during the check: the checkout rejects with 57P01, the pool recovers', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 1);
    assert.equal(await countRows(pool, 2), 10000);
    const pid = backendPid(pool);
    proxy.beforeNextQuery(async () => {
      await owner.query('select pg_terminate_backend($1)', [pid]);
    });
    const err = await pool.connect().then(
      (client) => {
        client.release(true);
        assert.fail('the checkout did not fail');
      },
      (e: Error & { code?: string }) => e,
    );
    assert.ok(!(err instanceof TenantLeakError));
    assert.equal(err.code, '57P01', `driver error expected, got ${err.message}`);
    assert.match(err.message, /terminating connection due to administrator command/);
    assert.equal(guardStats(pool)!.checkErrors, 1);
    assert.equal(pool.totalCount, 0, 'the dead connection is not kept');
    assert.equal(await countRows(pool, 3), 6666, 'the next job gets a new connection');
    await pool.end();
  });
});

/** Counts uncaught exceptions while `fn` runs (and one turn of the event loop after). */
async function countUncaught(fn: () => Promise<void>): Promise<Error[]> {
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await fn();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
  return uncaught;
}

test('FATAL in the same packet as the answer to the check: no uncaught error, the dead connection goes back to the pool to discard', async () => {
  await withProxy(async (proxy) => {
    // No 'error' listener of the job's on any client: only the guard can be listening in the hand-off window.
    const pool = guardedVia(proxy, 1, {}, false);
    assert.equal(await countRows(pool, 2), 10000);
    const pid = backendPid(pool);
    let outcome: pg.PoolClient | (Error & { code?: string }) | undefined;
    const uncaught = await countUncaught(async () => {
      // The check's answer is held from its ReadyForQuery on; the backend is
      // then terminated, and its FATAL is delivered in one chunk after the
      // ReadyForQuery: the client parses both in one 'data' event.
      proxy.holdNextReadyForQuery();
      const checkout = pool.connect().then(
        (client) => client,
        (err: Error) => err,
      );
      await waitUntil(() => proxy.heldMessages > 0, { what: "the check's ReadyForQuery to be held", intervalMs: 5 });
      await owner.query('select pg_terminate_backend($1)', [pid]);
      await proxy.serverSocketsClosed();
      assert.ok(proxy.heldMessages >= 2, 'the ReadyForQuery and the FATAL are held');
      proxy.release({ oneChunk: true });
      outcome = await checkout;
    });
    assert.deepEqual(uncaught.map(String), [], 'no uncaught exception');
    assert.ok(outcome instanceof Error, 'the dead connection is not handed out');
    assert.ok(!(outcome instanceof TenantLeakError));
    assert.equal(outcome.code, '57P01', `driver error expected, got ${outcome.message}`);
    assert.equal(guardStats(pool)!.checkErrors, 1);
    assert.equal(pool.totalCount, 0, 'the dead connection was discarded');
    assert.equal(await countRows(pool, 3), 6666, 'the next job gets a new connection');
    await pool.end();
  });
});

test('server restart while connections idle in the pool: every check fails cleanly, then jobs resume', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 4);
    await Promise.all([1, 2, 3, 4].map((t) => countRows(pool, t)));
    assert.equal(pool.idleCount, 4);

    // The restart: every backend is terminated, and the clients have not
    // heard yet (as after a failover behind a load balancer); the server
    // refuses new connections until it is back.
    proxy.hold = true;
    await owner.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and usename = $2',
      [db.database, WORKER_ROLE],
    );
    await proxy.serverSocketsClosed();
    proxy.refuse = true;

    const results = await Promise.allSettled(Array.from({ length: 8 }, () => pool.connect()));
    const errors = results.map((r) => {
      assert.equal(r.status, 'rejected', 'no checkout may succeed while the server is down');
      return (r as PromiseRejectedResult).reason as Error & { code?: string };
    });
    assert.ok(errors.every((e) => !(e instanceof TenantLeakError)));
    const checkFailures = errors.filter((e) => e.code === '57P01');
    assert.equal(checkFailures.length, 4, 'each idle connection failed its check with the driver error');
    assert.equal(guardStats(pool)!.checkErrors, 4);
    assert.equal(pool.totalCount, 0);

    proxy.refuse = false;
    proxy.release();
    assert.deepEqual(await Promise.all([5, 6, 7, 8].map((t) => countRows(pool, t))), [4000, 3333, 2857, 2500]);
    assert.ok(pool.totalCount <= 4);
    await pool.end();
  });
});

test('server restart mid-run, 16 jobs at a time on a pool of 4: failures are driver errors, the run recovers', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 4);
    const failures: Array<Error & { code?: string }> = [];
    const wrongRows: string[] = [];
    const failedBefore: string[] = [];
    let done = 0;
    let phase: 'before' | 'down' | 'after' = 'before';
    let afterSuccesses = 0;
    let running = 16;
    let onProgress = () => {};
    const progress = () => onProgress();

    async function worker(id: number) {
      const random = seeded(id);
      // Bounded: a pool that never recovers ends the run (and fails below) instead of spinning.
      for (let round = 0; round < 2_000 && afterSuccesses < 300; round++) {
        const tenant = 1 + Math.floor(random() * 100);
        try {
          const seen = await visibleTenants(pool, tenant);
          if (seen.join() !== String(tenant)) wrongRows.push(`tenant ${tenant} saw tenants [${seen}]`);
          done++;
          if (phase === 'after') afterSuccesses++;
        } catch (err) {
          failures.push(err as Error);
          if (phase === 'before') failedBefore.push(String(err));
        }
        progress();
      }
      running--;
      progress();
    }
    const until = (condition: () => boolean) =>
      new Promise<void>((resolve) => {
        onProgress = () => {
          if (condition() || running === 0) {
            onProgress = () => {};
            resolve();
          }
        };
        onProgress(); // the workers may all have ended already
      });

    const workers = Array.from({ length: 16 }, (_, id) => worker(id));
    await until(() => done >= 200);
    phase = 'down';
    proxy.refuse = true;
    await owner.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and usename = $2',
      [db.database, WORKER_ROLE],
    );
    await until(() => failures.length >= 20);
    proxy.refuse = false;
    phase = 'after';
    await Promise.all(workers);

    assert.ok(afterSuccesses >= 300, `the run recovered: ${afterSuccesses} jobs succeeded after the restart`);
    assert.deepEqual(wrongRows, []);
    assert.deepEqual(failedBefore, []);
    assert.ok(failures.length >= 20);
    for (const err of failures) {
      assert.ok(!(err instanceof TenantLeakError), `a fault was reported as a leak: ${err.message}`);
      assert.match(
        `${err.code ?? ''} ${err.message}`,
        /57P01|terminating connection|Connection terminated|ECONNRESET|EPIPE|not queryable/,
      );
    }
    assert.equal(guardStats(pool)!.violations, 0);
    assert.ok(pool.totalCount <= 4);
    await pool.end();
  });
});

test('a job that fails inside a transaction and releases before ReadyForQuery arrives: refused as a failed transaction', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 1);
    const client = await pool.connect();
    await client.query('begin');
    proxy.holdNextReadyForQuery();
    await assert.rejects(client.query('select 1/0'), /division by zero/);
    assert.equal(client.getTransactionStatus(), 'T', 'the status the driver holds is still the one before the error');
    client.release();
    const checkout = pool.connect();
    setImmediate(() => proxy.release()); // after the guard has looked at the client
    const err = await checkout.then(
      (c) => {
        c.release(true);
        assert.fail('a connection in a failed transaction was handed out');
      },
      (e: Error) => e,
    );
    assert.ok(err instanceof TenantLeakError, `TenantLeakError expected, got ${err}`);
    assert.equal(err.report.transactionStatus, 'E');
    assert.equal(guardStats(pool)!.checkErrors, 0);
    await pool.end();
  });
});

test('a failed COMMIT released before ReadyForQuery arrives is not mistaken for an open transaction', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 1);
    const client = await pool.connect();
    await client.query('create temp table pgq_guard_once (id int unique deferrable initially deferred)');
    await client.query('begin');
    await client.query('insert into pgq_guard_once values (1), (1)');
    proxy.holdNextReadyForQuery();
    // The deferred unique check fails at COMMIT, which ends the transaction.
    await assert.rejects(client.query('commit'), (e: Error & { code?: string }) => e.code === '23505');
    assert.equal(client.getTransactionStatus(), 'T', 'stale: the ReadyForQuery saying "idle" is held back');
    client.release();
    const checkout = pool.connect();
    setImmediate(() => proxy.release());
    const next = await checkout;
    assert.equal(next, client, 'the clean connection is handed out again');
    assert.equal(next.getTransactionStatus(), 'I');
    next.release();
    assert.equal(guardStats(pool)!.violations, 0);
    await pool.end();
  });
});

test('checkTimeoutMs: a check that never gets an answer rejects, and its connection is destroyed', async () => {
  await withProxy(async (proxy) => {
    const pool = guardedVia(proxy, 1, { checkTimeoutMs: 200 });
    assert.equal(await countRows(pool, 4), 5000);
    proxy.stallNextQuery();
    await assert.rejects(pool.connect(), (err: Error) => {
      assert.ok(!(err instanceof TenantLeakError));
      assert.match(err.message, /Query read timeout/);
      return true;
    });
    assert.equal(guardStats(pool)!.checkErrors, 1);
    assert.equal(pool.totalCount, 0, 'a connection with an unanswered query is never reused');
    assert.equal(await countRows(pool, 5), 4000);
    await pool.end();
  });
});

test("the pool's own statement_timeout and query_timeout still apply around the check", async () => {
  // No timing race: the cancelled statement waits on a lock the test holds, so it can only end by
  // the timeout; the other statements are index lookups a thousand times shorter than it.
  const pool = guardPool(
    new pg.Pool({ connectionString: db.workerUrl, max: 1, statement_timeout: 1000, query_timeout: 30_000 }),
    { settings: ['app.tenant'], elide: false },
  );
  pool.on('error', () => {});
  assert.deepEqual(await visibleTenants(pool, 2), [2]);
  const blocker = new pg.Client({ connectionString: db.ownerUrl });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table invoices in access exclusive mode');
    // The job's statement is cancelled by the server (57014) after the checkout passed its check.
    await assert.rejects(pool.query('select 1 from invoices limit 1'), (err: Error & { code?: string }) => err.code === '57014');
  } finally {
    await blocker.query('rollback');
    await blocker.end();
  }
  assert.deepEqual(await visibleTenants(pool, 3), [3], 'a cancelled statement leaves a clean connection');
  assert.equal(guardStats(pool)!.checkErrors, 0);
  assert.ok(guardStats(pool)!.checks >= 3, 'every checkout ran the check');
  await pool.end();
});
