// Which connection a parameter holds as its callers hand it in (model
// `clientParameter`, `handedValues`, `escapedFunctions`): a session-level
// write on a parameter the front end cannot type is quiet only where every
// call the scan sees hands it a single-connection client (a pg Client the
// job opens), through parameters, options objects and functions returned by
// calls; any pooled, unknown or unseen caller keeps the finding.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { handedConnections } from '../../src/model/handed.ts';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const parse = (text: string): FileModel => typescriptFrontEnd.parse(text, '/virtual/runner.ts', {});
const siteWith = (model: FileModel, fragment: string): SqlSite => {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(fragment));
  assert.ok(site, `a site with ${fragment}`);
  return site;
};
const handedTo = (model: FileModel, fragment: string) => {
  const target = siteWith(model, fragment).clientParameter;
  assert.ok(target, `the site with ${fragment} runs on a parameter`);
  return [...handedConnections({ handedValues: model.handedValues ?? [], escapedFunctions: model.escapedFunctions ?? [] })(target)].sort();
};

const HELPERS = `import pg from 'pg';
const pool = new pg.Pool();
interface Db { query(text: string, values?: unknown[]): Promise<unknown> }
async function own(): Promise<pg.Client> { const c = new pg.Client(); await c.connect(); return c; }
function locked<T>(key: number, run: (db: Db) => Promise<T>) { return async (db: Db) => { await db.query('select pg_advisory_lock($1)', [key]); return run(db); }; }
function job(t: string) { return async (db: Db) => { await db.query("select set_config('app.tenant', $1, false) /*job*/", [t]); }; }
`;

test('the site records the parameter its receiver is, through a destructured options object and a member of one', () => {
  const model = parse(`${HELPERS}
export async function a({ db }: { db: Db }, t: string) { await db.query("select set_config('app.tenant', $1, false) /*a*/", [t]); }
export async function b(options: { db: Db }, t: string) { await options.db.query("select set_config('app.tenant', $1, false) /*b*/", [t]); }
export async function c(db: Db, t: string) { db = pool; await db.query("select set_config('app.tenant', $1, false) /*c*/", [t]); }
export async function d(db: pg.PoolClient, t: string) { await db.query("select set_config('app.tenant', $1, false) /*d*/", [t]); }
`);
  assert.deepEqual({ ...siteWith(model, '/*a*/').clientParameter, function: undefined }, { function: undefined, parameter: 0, property: 'db' });
  assert.deepEqual({ ...siteWith(model, '/*b*/').clientParameter, function: undefined }, { function: undefined, parameter: 0, property: 'db' });
  assert.equal(siteWith(model, '/*c*/').clientParameter, undefined, 'assigned another connection: no longer what the callers hand');
  assert.equal(siteWith(model, '/*d*/').clientParameter, undefined, 'a driver type says what it is');
});

test('a const of the body that takes a property of a parameter is that property as the callers hand it', () => {
  const model = parse(`${HELPERS}
export async function e(options: { db: Db }, t: string) { const { db } = options; await db.query("select set_config('app.tenant', $1, false) /*e*/", [t]); }
export async function f(options: { db: Db }, t: string) { const db = options.db; await db.query("select set_config('app.tenant', $1, false) /*f*/", [t]); }
export async function g(options: { db: Db }, t: string) { let db = options.db; db = pool; await db.query("select set_config('app.tenant', $1, false) /*g*/", [t]); }
export async function main() { const c = await own(); try { await e({ db: c }, '1'); await f({ db: c }, '2'); } finally { await c.end(); } }
`);
  assert.deepEqual({ ...siteWith(model, '/*e*/').clientParameter, function: undefined }, { function: undefined, parameter: 0, property: 'db' });
  assert.deepEqual({ ...siteWith(model, '/*f*/').clientParameter, function: undefined }, { function: undefined, parameter: 0, property: 'db' });
  assert.equal(siteWith(model, '/*g*/').clientParameter, undefined, 'a let assigned another connection: not what the callers hand');
  assert.deepEqual(handedTo(model, '/*e*/'), ['dedicated']);
});

test('a client the job opens reaches a function returned by a call, through the function that runs it', () => {
  const model = parse(`${HELPERS}
async function migrate({ db }: { db: Db }) { return locked(1, job('1'))(db); }
export async function main() { const c = await own(); try { await migrate({ db: c }); } finally { await c.end(); } }
`);
  assert.deepEqual(handedTo(model, '/*job*/'), ['dedicated']);
});

test('a pooled client, a value the walk cannot tell, a spread, or no call at all: not only single-connection clients', () => {
  const mixed = parse(`${HELPERS}
export async function main() { const c = await own(); try { await locked(1, job('1'))(c); } finally { await c.end(); } }
export async function worker() { const c = await pool.connect(); try { await locked(1, job('2'))(c); } finally { c.release(); } }
`);
  assert.deepEqual(handedTo(mixed, '/*job*/'), ['dedicated', 'pooled-client']);
  const unknown = parse(`${HELPERS}
declare function clientFromSomewhere(): Db;
export async function main() { const c = await own(); try { await locked(1, job('1'))(c); } finally { await c.end(); } }
export async function other() { await locked(1, job('2'))(clientFromSomewhere()); }
`);
  assert.deepEqual(handedTo(unknown, '/*job*/'), ['dedicated', 'unknown']);
  const spread = parse(`${HELPERS}
export async function main(...args: [Db]) { const c = await own(); try { await job('1')(c); await job('2')(...args); } finally { await c.end(); } }
`);
  assert.deepEqual(handedTo(spread, '/*job*/'), ['dedicated', 'unknown']);
  assert.deepEqual(handedTo(parse(HELPERS), '/*job*/'), [], 'no call seen: nothing is known');
});

test('a function also given to a call the walk does not follow may be run there with any connection', () => {
  const model = parse(`${HELPERS}
declare const queue: { process(handler: (db: Db) => Promise<void>): void };
async function handler(db: Db) { await db.query("select set_config('app.tenant', '1', false) /*handler*/"); }
export async function main() { const c = await own(); try { await handler(c); } finally { await c.end(); } }
queue.process(handler);
`);
  assert.deepEqual(handedTo(model, '/*handler*/'), ['unknown']);
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'pgq-handed-'));
  writeFileSync(join(dir, 'package.json'), '{}');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test('no-session-tenant-setting: quiet only where every call seen hands a single-connection client', async () => {
  const findings = async (text: string) => {
    const dir = project({ 'runner.ts': text });
    const { results } = await scan({ paths: [dir], concurrency: 'off' });
    return results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'no-session-tenant-setting').map((m) => m.line));
  };
  const own = `${HELPERS}export async function main() { const c = await own(); try { await locked(1, job('1'))(c); } finally { await c.end(); } }\n`;
  assert.deepEqual(await findings(own), []);
  assert.deepEqual(await findings(`${own}export async function worker() { const c = await pool.connect(); try { await job('2')(c); } finally { c.release(); } }\n`), [6]);
  assert.deepEqual(await findings(HELPERS), [6], 'no caller seen: reported as before');
});
