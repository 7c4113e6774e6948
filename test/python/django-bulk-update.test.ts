// Django's bulk_update(objs, fields) as the UPDATE it sends: each field set to
// the literals the code assigns that attribute (in the calling file, or in the
// model's own methods in its module), by the objects' ids; the queryset's own
// filter kept. A release by ids only after a lease claim is a finish the fence
// rule judges; one filtered by the worker's token is fenced.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { scan } from '../../src/scan/scan.ts';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parseLines, siteWith } from './model-helpers.ts';

before(() => loadSqlParser());

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pgq-py-bulk-'));
  for (const [name, text] of Object.entries({ 'pyproject.toml': '[project]\nname = "w"\n', 'app/__init__.py': '', ...files })) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  clearProjectCache();
  return root;
}

const MODELS = [
  'from django.db import models',
  '',
  'class Chore(models.Model):',
  '    is_locked = models.BooleanField(default=False)',
  '    locked_at = models.DateTimeField(null=True)',
  '    state = models.CharField(max_length=10)',
  '',
  '    class Meta:',
  '        db_table = "chores"',
  '',
  '    def release(self):',
  '        self.is_locked = False',
  '        self.locked_at = None',
  '',
].join('\n');

const WORKER = (finish: string) =>
  [
    'from django.db import connection',
    'from app.models import Chore',
    '',
    'CLAIM = "UPDATE chores SET is_locked = true, locked_by = %s, locked_at = now(), tries = tries + 1 WHERE id IN (SELECT id FROM chores WHERE tries < 5 AND (is_locked = false OR locked_at < now() - interval \'10 minutes\') ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED) RETURNING id, tries"',
    'KEEP = "UPDATE chores SET locked_at = now() WHERE id = %s AND locked_by = %s"',
    '',
    'def run(ids, worker):',
    '    with connection.cursor() as cur:',
    '        cur.execute(CLAIM, (worker,))',
    '        chores = list(Chore.objects.filter(id__in=ids))',
    '        for chore in chores:',
    '            cur.execute(KEEP, (chore.id, worker))',
    '            chore.release()',
    `    ${finish}`,
    '',
  ].join('\n');

test('bulk_update sets the literals the model assigns in its own module, by the objects ids', async () => {
  const root = project({ 'app/models.py': MODELS, 'app/worker.py': WORKER('Chore.objects.bulk_update(chores, ["is_locked", "locked_at"])') });
  const { results } = await scan({ paths: [root] });
  const worker = results.find((r) => r.filePath.endsWith('worker.py'))!;
  assert.deepEqual(
    worker.messages.map((m) => [m.line, m.ruleId]),
    [[14, 'require-fenced-finish']],
    worker.messages.map((m) => m.message).join('\n'),
  );
});

test('bulk_update on a queryset filtered by the value the claim wrote keeps the filter: fenced', async () => {
  const root = project({ 'app/models.py': MODELS, 'app/worker.py': WORKER('Chore.objects.filter(locked_by=worker).bulk_update(chores, ["is_locked", "locked_at"])') });
  const { results } = await scan({ paths: [root] });
  const worker = results.find((r) => r.filePath.endsWith('worker.py'))!;
  assert.deepEqual(worker.messages.map((m) => m.ruleId), []);
});

test('bulk_update in one file: a value that is not a literal is an unknown parameter; the queryset filter, then the ids', () => {
  const model = parseLines([
    'from django.db import models',
    'class Chore(models.Model):',
    '    state = models.CharField(max_length=10)',
    '    class Meta:',
    '        db_table = "chores"',
    'def finish(chores, ok):',
    '    for chore in chores:',
    '        chore.state = "done" if ok else "failed"',
    '        if ok:',
    '            chore.state = "done"',
    '        else:',
    '            chore.state = "failed"',
    '    Chore.objects.filter(locked_by="w1").bulk_update(chores, fields=["state", "note"])',
  ]);
  const site = siteWith(model, 'bulk_update');
  const write = site.analysis.statements[0].rowWrites[0];
  assert.equal(write.table, 'chores');
  assert.deepEqual(write.assignments.map((a) => [a.column, a.value.kind]), [['state', 'param'], ['note', 'param']]);
  assert.deepEqual(write.where.map((c) => [c.column, c.op]), [['locked_by', '='], ['id', '=']]);
});

test('bulk_update with every assignment a literal: one value, or a CASE of them', () => {
  const model = parseLines([
    'from django.db import models',
    'class Chore(models.Model):',
    '    state = models.CharField(max_length=10)',
    '    class Meta:',
    '        db_table = "chores"',
    'def finish(chores, ok):',
    '    for chore in chores:',
    '        if ok:',
    '            chore.state = "done"',
    '        else:',
    '            chore.state = "failed"',
    '        chore.locked_by = None',
    '    Chore.objects.bulk_update(chores, ["state", "locked_by"])',
  ]);
  const site = siteWith(model, 'bulk_update');
  const [state, lockedBy] = site.analysis.statements[0].rowWrites[0].assignments;
  assert.equal(state.value.kind, 'expression');
  assert.deepEqual([lockedBy.column, lockedBy.value], ['locked_by', { kind: 'literal', value: null }]);
});
