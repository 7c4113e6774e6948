// The settings rules on the facts the host front ends fill — the values bound
// to placeholders, a pool's reuse and its driver's own reset, callback roles —
// with FileModels built by hand (the contract), and across files: a call in
// host code of a routine defined in the project's SQL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { brief, hostModel, pool, runOn, sqlModel } from './support/models.ts';

const tx = { kind: 'transaction', id: 'job', form: 'BEGIN', rollsBackOnError: true } as const;

describe('no-session-tenant-setting on host facts', () => {
  const rule = 'no-session-tenant-setting';
  const setter = "select set_config($1, $2, false)";

  test('the name and value from the literal values array: reported; a cleared value is not', () => {
    assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', setter, { scope: tx, params: [{ kind: 'literal', value: 'app.tenant' }, { kind: 'unknown' }] }, [pool('p')])])), ['a.ts:1 session']);
    assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', setter, { scope: tx, params: [{ kind: 'literal', value: 'app.tenant' }, { kind: 'literal', value: '' }] }, [pool('p')])])), []);
    assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', setter, { scope: tx, params: [{ kind: 'literal', value: 'statement_timeout' }, { kind: 'unknown' }] }, [pool('p')])])), []);
    assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', "select set_config('app.tenant', $1, $2)", { scope: tx, params: [{ kind: 'unknown' }, { kind: 'literal', value: false }] }, [pool('p')])])), ['a.ts:1 session']);
  });

  test('a helper whose callers pass the name: reported once, saying the callers choose it', () => {
    const found = runOn(rule, [hostModel('h.ts', setter, { scope: tx, functionName: 'setSetting', params: [{ kind: 'caller-parameter', name: 'key' }, { kind: 'caller-parameter', name: 'value' }] }, [pool('p')])]);
    assert.deepEqual(brief(found), ['h.ts:1 genericHelper']);
    assert.match(found[0].message, /setSetting writes the setting its callers name \(key\).*The name is chosen by the callers/);
  });

  test('pools whose session state cannot reach another tenant: per tenant, one connection, no reuse', () => {
    for (const reuse of ['per-tenant', 'single-connection', 'no-reuse'] as const) {
      assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', "set app.tenant = '1'", { scope: tx }, [pool('p', { reuse })])])), [], reuse);
    }
    assert.deepEqual(brief(runOn(rule, [hostModel('a.ts', "set app.tenant = '1'", { scope: tx }, [pool('p', { reuse: 'shared' })])])), ['a.ts:1 session']);
  });

  test('a constant re-applied in a connect or checkout hook is not reported', () => {
    for (const role of ['configure', 'checkout'] as const) {
      const model = hostModel('a.ts', 'SET ROLE app_user', { scope: { kind: 'autocommit' }, callback: { configId: 'p', role } }, [pool('p')]);
      assert.deepEqual(brief(runOn(rule, [model])), [], role);
    }
  });

  test("request.* settings (PostgREST) are known; requestSettings: [] checks them", () => {
    const model = () => hostModel('a.ts', "select set_config('request.jwt.claims', $1, false)", { scope: tx }, [pool('p')]);
    assert.deepEqual(brief(runOn(rule, [model()])), []);
    assert.deepEqual(brief(runOn(rule, [model()], { requestSettings: [] })), ['a.ts:1 session']);
  });

  test('a host call that passes false as the level parameter of a routine in the project\'s SQL: reported at the call, naming the routine', () => {
    const routine = sqlModel('db/001_tenant.sql', "create function use_tenant(p_tenant text, p_local boolean) returns void\nlanguage sql as $$ select set_config('app.tenant', p_tenant, p_local) $$;");
    const call = hostModel('src/worker.ts', 'select use_tenant($1, false)', { scope: tx }, [pool('p')]);
    const found = runOn(rule, [routine, call]);
    assert.deepEqual(brief(found), ['src/worker.ts:1 routineCall']);
    assert.match(found[0].message, /use_tenant \(db\/001_tenant\.sql:2\)/);
    assert.deepEqual(brief(runOn(rule, [routine, hostModel('src/worker.ts', 'select use_tenant($1, true)', { scope: tx }, [pool('p')])])), []);
  });

  test('a session write in a routine: reported at the routine, and at a host call that runs it on a pooled connection nothing clears', () => {
    const routine = sqlModel('db/001.sql', "create function enter_tenant(p text) returns void language sql as $$ select set_config('app.tenant', p, false) $$;");
    const leave = sqlModel('db/002.sql', "create function leave_tenant() returns void language sql as $$ select set_config('app.tenant', '', false) $$;");
    const call = hostModel('src/worker.ts', 'select enter_tenant($1)', { scope: tx }, [pool('p')]);
    const found = runOn(rule, [routine, call]);
    assert.deepEqual(brief(found), ['db/001.sql:1 routine', 'src/worker.ts:1 pooledRoutineCall']);
    assert.match(found[1].message, /enter_tenant \(db\/001\.sql:1\), which writes 'app\.tenant' at session level/);
    // Its own connection, a pool that serves one tenant, a finally that clears it (by name or through a routine that does): one job's.
    assert.deepEqual(brief(runOn(rule, [routine, hostModel('src/worker.ts', 'select enter_tenant($1)', { scope: tx, connection: { kind: 'dedicated' } }, [pool('p')])])), ['db/001.sql:1 routine']);
    assert.deepEqual(brief(runOn(rule, [routine, hostModel('src/worker.ts', 'select enter_tenant($1)', { scope: tx }, [pool('p', { reuse: 'per-tenant' })])])), ['db/001.sql:1 routine']);
    for (const resets of [['app.tenant'], ['*'], ['call:leave_tenant']]) {
      const cleared = hostModel('src/worker.ts', 'select enter_tenant($1)', { scope: tx }, [pool('p')]);
      cleared.sites[0].resetInFinally = resets;
      assert.deepEqual(brief(runOn(rule, [routine, leave, cleared])), ['db/001.sql:1 routine'], resets.join());
    }
    // Alone, the host file says nothing of the routine.
    assert.deepEqual(brief(runOn(rule, [call])), []);
  });
});

describe('no-local-setting-outside-transaction across files', () => {
  const rule = 'no-local-setting-outside-transaction';
  const setter = sqlModel('db/002_enter.sql', "create function enter_tenant_locally(p text) returns void language plpgsql as $$\nbegin\n  perform set_config('app.tenant', p, true);\nend $$;");

  test('a setter routine called in autocommit: its setting ends with the call; reported at the call', () => {
    const call = hostModel('src/job.ts', 'select enter_tenant_locally($1)', { scope: { kind: 'autocommit' }, connection: { kind: 'pool', configId: 'p' } }, [pool('p')]);
    const found = runOn(rule, [setter, call]);
    assert.deepEqual(brief(found), ['src/job.ts:1 setterOutsideTransaction']);
    assert.match(found[0].message, /enter_tenant_locally \(db\/002_enter\.sql:3\) sets 'app.tenant'/);
  });

  test('quiet in a transaction, and for a routine that does its work itself', () => {
    assert.deepEqual(brief(runOn(rule, [setter, hostModel('src/job.ts', 'select enter_tenant_locally($1)', { scope: tx }, [pool('p')])])), []);
    const worker = sqlModel('db/003.sql', "create function tenant_total(p text) returns bigint language plpgsql as $$\nbegin\n  perform set_config('app.tenant', p, true);\n  return (select count(*) from invoices);\nend $$;");
    assert.deepEqual(brief(runOn(rule, [worker, hostModel('src/job.ts', 'select tenant_total($1)', { scope: { kind: 'autocommit' } }, [pool('p')])])), []);
  });
});

describe('no-discard-all-with-prepared-statements: the driver\'s own reset', () => {
  const rule = 'no-discard-all-with-prepared-statements';
  const slonik = (extra: Parameters<typeof pool>[1]) =>
    pool('p', { driver: 'slonik', driverReset: { statements: ['DISCARD ALL'], reason: "Slonik's default resetConnection" }, ...extra });

  test('a pool whose driver runs DISCARD ALL on release and that keeps prepared statements: reported at the pool', () => {
    const found = runOn(rule, [hostModel('db.ts', 'select 1', {}, [slonik({ preparedStatements: 'yes', preparedReason: 'named queries in this file' })])]);
    assert.deepEqual(brief(found), ['db.ts:1 driverDefault']);
    assert.match(found[0].message, /slonik runs DISCARD ALL on every connection the pool takes back \(Slonik's default resetConnection\)/);
  });

  test('quiet without prepared statements, and when the app gives its own reset', () => {
    assert.deepEqual(brief(runOn(rule, [hostModel('db.ts', 'select 1', {}, [slonik({ preparedStatements: 'no' })])])), []);
    const ownReset = slonik({ preparedStatements: 'yes', callbacks: [{ role: 'reset', name: 'resetConnection', span: { start: 0, end: 1 }, endsOutsideTransaction: true, resolved: true }] });
    assert.deepEqual(brief(runOn(rule, [hostModel('db.ts', 'select 1', {}, [ownReset])])), []);
  });
});

describe('no-tenant-policy-on-queue: a per-tenant worker in host code', () => {
  const rule = 'no-tenant-policy-on-queue';
  const schema = sqlModel('db/001.sql', "alter table jobs enable row level security;\ncreate policy jobs_tenant on jobs using (tenant_id = nullif(current_setting('app.tenant', true), '')::int);");
  const claim = "select id from jobs where status = 'queued' for update skip locked limit 1";

  test('a worker that claims without a tenant: the policy hides every job from it', () => {
    assert.deepEqual(brief(runOn(rule, [schema, hostModel('src/worker.ts', claim, { scope: tx })])), ['db/001.sql:2 tenantPolicyOnQueueAcross']);
  });

  test('a worker that sets its tenant in the same transaction first: quiet', () => {
    const worker = hostModel('src/worker.ts', "select set_config('app.tenant', $1, true)", { scope: tx });
    const claimSite = hostModel('src/worker.ts', claim, { scope: tx }).sites[0];
    claimSite.span = { start: worker.text.length + 1, end: worker.text.length + 1 + claim.length };
    worker.text = `${worker.text}\n${claim}`;
    claimSite.analysis.statements = claimSite.analysis.statements.map((s) => ({ ...s, span: { start: s.span.start + claimSite.span.start, end: s.span.end + claimSite.span.start }, lockingReads: s.lockingReads.map((l) => ({ ...l, span: { start: l.span.start + claimSite.span.start, end: l.span.end + claimSite.span.start } })) }));
    worker.sites.push(claimSite);
    assert.deepEqual(brief(runOn(rule, [schema, worker])), []);
  });
});
