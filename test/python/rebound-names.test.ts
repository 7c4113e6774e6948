// A name a function binds more than once: the value that reaches a use is
// the last plain assignment before it in a block that holds the use, unless
// a later binding can come back to the use around a loop, or a branch
// between them may have bound it too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DefIndex } from '../../src/languages/python/flow/def-index.ts';
import { parsePython, type Node } from '../../src/languages/python/syntax.ts';

/** The value the index gives the name at its use marked `use(NAME)` in the source. */
function valueAtUse(lines: string[], name: string): string | undefined {
  const parsed = parsePython(lines.join('\n') + '\n');
  assert.ok(parsed.ok);
  const index = new DefIndex(parsed.tree, parsed.text);
  const at = parsed.text.indexOf(`use(${name})`) + 4;
  let node: Node | null = parsed.tree.topNode.resolveInner(at, 1);
  while (node && node.name !== 'VariableName') node = node.parent;
  assert.ok(node, `no use of ${name}`);
  const value = index.localValue(node);
  return value ? parsed.text.slice(value.from, value.to) : undefined;
}

test('the assignment in the branch that uses the name reaches the use; the later one does not', () => {
  const lines = ['def f(flag):', '    if flag:', '        q = "locked"', '        use(q)', '        return', '    q = "plain"', '    return q'];
  assert.equal(valueAtUse(lines, 'q'), '"locked"');
});

test('an assignment in a branch that may not run between the dominating one and the use: unknown', () => {
  const lines = ['def f(flag):', '    q = "plain"', '    if flag:', '        q = "locked"', '    use(q)'];
  assert.equal(valueAtUse(lines, 'q'), undefined);
});

test('a later assignment in the loop around the use can reach it on the next turn: unknown', () => {
  const lines = ['def f(items):', '    q = "first"', '    for item in items:', '        use(q)', '        q = "next"'];
  assert.equal(valueAtUse(lines, 'q'), undefined);
});

test('an assignment after the use outside any loop does not reach it', () => {
  const lines = ['def f():', '    q = "first"', '    use(q)', '    q = "second"', '    return q'];
  assert.equal(valueAtUse(lines, 'q'), '"first"');
});

test('a loop target or an augmented assignment as the reaching binding: unknown', () => {
  assert.equal(valueAtUse(['def f(items):', '    q = "first"', '    for q in items:', '        pass', '    use(q)'], 'q'), undefined);
  assert.equal(valueAtUse(['def f():', '    q = "first"', '    q += " more"', '    use(q)'], 'q'), undefined);
});

test('a refinement of the name by itself in a branch the use is not in: the value it refines (a weaker filter)', () => {
  const lines = ['def f(kinds):', '    rows = Parcel.objects.filter(ready)', '    if kinds:', '        rows = rows.filter(kind__in=kinds)', '    use(rows)'];
  assert.equal(valueAtUse(lines, 'rows'), 'Parcel.objects.filter(ready)');
});

test('a branch that binds the name to something other than a refinement of it: still unknown', () => {
  assert.equal(valueAtUse(['def f(kinds):', '    rows = Parcel.objects.filter(ready)', '    if kinds:', '        rows = Other.objects.all()', '    use(rows)'], 'rows'), undefined);
  assert.equal(valueAtUse(['def f(kinds):', '    rows = Parcel.objects.filter(ready)', '    if kinds:', '        rows = pick(rows)', '    use(rows)'], 'rows'), undefined);
});

test('an unconditional refinement before the use is the value that reaches it', () => {
  const lines = ['def f():', '    rows = Parcel.objects.filter(ready)', '    rows = rows.filter(tries__lt=5)', '    use(rows)'];
  assert.equal(valueAtUse(lines, 'rows'), 'rows.filter(tries__lt=5)');
});
