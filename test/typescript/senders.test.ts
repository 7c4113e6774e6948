// Query helpers (flow/senders.ts): a function that hands its text (and
// values) on unchanged to one call on a name bound outside it is read as that
// call; anything that does more with its text is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseTypeScriptProgram } from '../../src/languages/typescript/parse.ts';
import { senderShape } from '../../src/languages/typescript/flow/senders.ts';
import type { FunctionNode } from '../../src/languages/typescript/syntax.ts';

/** The shape of the file's one function named `send`: `receiver.method`, or undefined. */
function shapeOf(code: string): string | undefined {
  const program = parseTypeScriptProgram(code, 'helper.ts');
  for (const statement of program.body) {
    const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (d?.type === 'FunctionDeclaration' && d.id?.name === 'send') return describe(d);
    if (d?.type === 'VariableDeclaration') {
      for (const v of d.declarations) {
        if (v.id.type === 'Identifier' && v.id.name === 'send' && (v.init?.type === 'ArrowFunctionExpression' || v.init?.type === 'FunctionExpression')) return describe(v.init);
      }
    }
  }
  throw new Error('no send');
}
const describe = (fn: FunctionNode) => {
  const shape = senderShape(fn);
  return shape ? `${shape.receiver}.${shape.method}` : undefined;
};

test('helpers that hand their text on: an arrow, a timed and logged call, a values default', () => {
  assert.equal(shapeOf('const send = (text, params) => pool.query(text, params);'), 'pool.query');
  assert.equal(shapeOf(`export async function send(text: string, values: unknown[] = []) {
    const t = Date.now();
    const res = await pool.query(text, values);
    console.log('query', { text, ms: Date.now() - t });
    logger.debug(text);
    return res.rows;
  }`), 'pool.query');
  assert.equal(shapeOf('const send = (text: string) => sql.unsafe(text);'), 'sql.unsafe');
});

test('functions that do more with their text are not helpers', () => {
  // The receiver is the function's own (a client it checks out).
  assert.equal(shapeOf(`async function send(text, values) {
    const client = await pool.connect();
    try { return await client.query(text, values); } finally { client.release(); }
  }`), undefined);
  // Two calls, or the text handed to a function of its own.
  assert.equal(shapeOf('async function send(text) { await pool.query(text); await replica.query(text); }'), undefined);
  assert.equal(shapeOf('async function send(text) { return run(text); }'), undefined);
  // The text or the values changed on the way, or handed elsewhere too.
  assert.equal(shapeOf('async function send(text) { text = text.trim(); return pool.query(text); }'), undefined);
  assert.equal(shapeOf('const send = (text, values) => pool.query(text, [tenant, ...values]);'), undefined);
  assert.equal(shapeOf('const send = (text, values) => pool.query(wrap(text), values);'), undefined);
  // A third parameter: some other contract.
  assert.equal(shapeOf('const send = (text, values, options) => pool.query(text, values);'), undefined);
});
