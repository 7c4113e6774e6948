// Connections handed from function to function: a helper's SQL on its
// connection parameter runs in whatever state the callers hand it in, until
// the helper moves it (BEGIN) or hands it to a call the walk does not follow;
// a call of a project function says what state it hands in, or where that
// comes from. The project fixtures' bad twin is flagged on its `expect:`
// lines only and the good twin is quiet.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { expectationsOf } from '../helpers/expectations.ts';

before(() => loadSqlParser());

const parse = (text: string): FileModel => typescriptFrontEnd.parse(text, '/virtual/helpers.ts', {});
const siteWith = (model: FileModel, fragment: string): SqlSite => {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(fragment));
  assert.ok(site, `a site with ${fragment}`);
  return site;
};

const header = `import pg from 'pg';\nconst pool = new pg.Pool();\n`;

test('SQL on a connection parameter the function has not moved runs on the parameter; after its own BEGIN, or a call that was handed it, it does not', () => {
  const model = parse(`${header}
export async function plain(client: pg.PoolClient, t: string) { await client.query("select set_config('app.tenant', $1, true) /*plain*/", [t]); }
export async function begun(client: pg.PoolClient, t: string) { await client.query('BEGIN'); await client.query("select set_config('app.tenant', $1, true) /*begun*/", [t]); }
export async function handed(client: pg.PoolClient, t: string) { await prepare(client); await client.query("select set_config('app.tenant', $1, true) /*handed*/", [t]); }
export async function inCallback(client: pg.PoolClient, t: string) { return runIn(client, async () => client.query("select set_config('app.tenant', $1, true) /*callback*/", [t])); }
export async function immediate(client: pg.PoolClient, t: string) { return (async () => client.query("select set_config('app.tenant', $1, true) /*iife*/", [t]))(); }
`);
  const plain = siteWith(model, '/*plain*/');
  assert.equal(plain.runsOnParameter?.parameter, 0);
  assert.equal(plain.runsOnParameter?.function.module, '/virtual/helpers.ts');
  assert.equal(plain.scope.kind, 'unknown', 'its scope is still what the callers decide');
  assert.equal(siteWith(model, '/*begun*/').runsOnParameter, undefined);
  assert.equal(siteWith(model, '/*handed*/').runsOnParameter, undefined);
  assert.equal(siteWith(model, '/*callback*/').runsOnParameter, undefined);
  assert.equal(siteWith(model, '/*iife*/').runsOnParameter?.parameter, 0, 'a function called where it is written runs now');
});

test('a call of a project function records the state it hands the connection in, or where that comes from', () => {
  const model = parse(`${header}
async function enter(client: pg.PoolClient, t: string) { await client.query("select set_config('app.tenant', $1, true)", [t]); }
async function relay(client: pg.PoolClient, t: string) { await enter(client, t); }
export async function fresh(t: string) { const c = await pool.connect(); try { await enter(c, t); } finally { c.release(); } }
export async function open(t: string) { const c = await pool.connect(); try { await c.query('BEGIN'); await enter(c, t); await c.query('COMMIT'); } finally { c.release(); } }
export async function job(withClient: any, t: string) { return withClient(async (client: any) => relay(client, t)); }
`);
  const calls = model.connectionCalls ?? [];
  const line = (offset: number) => model.text.slice(0, offset).split('\n').length;
  const byLine = new Map(calls.map((c) => [line(c.span.start), c]));
  assert.equal(byLine.get(5)?.fromParameter?.parameter, 0, 'relay hands on its own parameter');
  assert.equal(byLine.get(6)?.scope.kind, 'autocommit', 'a client just checked out is outside any transaction');
  assert.equal(byLine.get(7)?.scope.kind, 'transaction', 'after BEGIN it is in that transaction');
  assert.equal(byLine.get(8), undefined, 'a callback of a function that is not the project\'s: nothing known');
});

test("a type written from a pool's reserve() is a reserved connection", () => {
  const model = parse(`import postgres, { type Sql } from 'postgres';
type Reserved = Awaited<ReturnType<Sql['reserve']>>;
export async function configure(reserved: Reserved, t: string) { await reserved.unsafe(\`SET LOCAL app.tenant = '\${Number(t)}'\`); }
`);
  const site = siteWith(model, 'SET LOCAL');
  assert.equal(site.connection.kind, 'pooled-client');
  assert.equal(site.runsOnParameter?.parameter, 0);
});

const projects = join(import.meta.dirname, '../../fixtures/projects');
for (const name of ['ts-parameter-client-bad', 'ts-parameter-client-good']) {
  test(`fixtures/projects/${name} is flagged on its expect: lines only`, async () => {
    const { results } = await scan({ paths: [join(projects, name)], concurrency: 'off' });
    assert.ok(results.length > 0);
    for (const result of results) {
      const expected = expectationsOf(readFileSync(result.filePath, 'utf8'));
      const actual = result.messages.map((m) => ({ line: m.line, ruleId: m.ruleId! }));
      assert.deepEqual(actual, expected, `${result.filePath}: ${result.messages.map((m) => `${m.line} ${m.message}`).join('\n')}`);
    }
    if (name.endsWith('-bad')) assert.ok(results.some((r) => r.messages.length > 0), 'the bad twin is flagged');
  });
}
