// Side effects one call away: a call in a locking transaction of a project
// function (a method of the class, a function of the file, a few calls deep)
// that calls the outside world is a side effect with the chain that reaches it;
// a timer a helper arms, a helper that only computes, and a chain deeper than
// the bound are not.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { typescriptFrontEnd } from '../../src/languages/typescript/index.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(() => loadSqlParser());

const effectsOf = (body: string, helpers: string) =>
  typescriptFrontEnd
    .parse(
      `import pg from 'pg';
const pool = new pg.Pool();
${helpers}
export class Relay {
  hook = 'https://example.test';
  async send(id: number) { await fetch(this.hook, { method: 'POST', body: String(id) }); }
  label(id: number) { return 'event ' + id; }
  async run() {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT id FROM events FOR UPDATE SKIP LOCKED LIMIT 1');
      ${body}
      await c.query('COMMIT');
    } catch (e) { await c.query('ROLLBACK'); throw e; } finally { c.release(); }
  }
}`,
      '/virtual/relay.ts',
      {},
    )
    .sideEffects.filter((e) => e.scope.kind === 'transaction').map((e) => ({ callee: e.callee, through: e.through, scope: e.scope.kind }));

test('a method of the class and a function of the file that call out, with their chain', () => {
  assert.deepEqual(effectsOf('await this.send(1);', ''), [{ callee: 'this.send', through: ['this.send', 'fetch'], scope: 'transaction' }]);
  assert.deepEqual(effectsOf('await outer(1);', 'async function inner(n: number) { await fetch("https://x.test/" + n); }\nconst outer = async (n: number) => { await inner(n); };'), [
    { callee: 'outer', through: ['outer', 'inner', 'fetch'], scope: 'transaction' },
  ]);
});

test('quiet: helpers that compute, arm a timer, or reach the outside world only past the bound', () => {
  assert.deepEqual(effectsOf('this.label(1); arm(1);', 'function arm(n: number) { return setTimeout(() => console.log(n), 10); }'), []);
  const deep = 'async function d4() { await fetch("https://x.test"); }\nasync function d3() { await d4(); }\nasync function d2() { await d3(); }\nasync function d1() { await d2(); }';
  assert.deepEqual(effectsOf('await d1();', deep), []);
  assert.deepEqual(effectsOf('await d2();', deep).map((e) => e.through), [['d2', 'd3', 'd4', 'fetch']]);
});
