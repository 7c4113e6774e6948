// UTF-16 indexes and UTF-8 byte offsets of a text (offsets.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { utf16ToByteMap, utf8Of } from '../../src/sql/offsets.ts';

test('the byte offset of each index is the UTF-8 length of the prefix before it, pairs cut in two and lone surrogates included', () => {
  for (const text of ['', 'ascii only', 'é, ñ and — in a comment', 'an emoji 😀 and 𝄞 here', 'lone \ud83d high and \ude00 low', '😀', '\ud83d']) {
    const byteOf = utf16ToByteMap(text);
    for (let index = -text.length - 2; index <= text.length + 2; index++) {
      assert.equal(byteOf(index), Buffer.byteLength(text.slice(0, index)), `${JSON.stringify(text)} at ${index}`);
    }
    assert.equal(byteOf(Number.NaN), 0);
  }
});

test('the UTF-8 bytes of a text are those of Buffer.from, the same text asked again or another one', () => {
  const a = 'select é from t';
  const b = 'select 1';
  assert.deepEqual(utf8Of(a), Buffer.from(a));
  assert.deepEqual(utf8Of(a), Buffer.from(a));
  assert.deepEqual(utf8Of(b), Buffer.from(b));
  assert.deepEqual(utf8Of(a), Buffer.from(a));
});
