// Django queue code as the SQL it sends: choices constants as the states
// they store, `A if ok else B` as a CASE, Q objects as conditions, and an
// optimistic compare-and-set (a read without a lock, then an update that
// matches only while the row still holds what the read saw) as one claim.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import type { FileModel } from '../../src/model/index.ts';
import type { RowWrite } from '../../src/sql/index.ts';
import { clearDjangoCache } from '../../src/languages/python/drivers/django/settings.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';
import { clearProjectCache } from '../../src/languages/python/flow/project.ts';
import { loadSqlParser } from '../../src/sql/index.ts';

before(async () => {
  await loadSqlParser();
});

const MODEL = [
  'from django.db import models',
  'class Job(models.Model):',
  '    class Status(models.TextChoices):',
  '        QUEUED = "queued", "Queued"',
  '        RUNNING = "running", "Running"',
  '        DONE = "done"',
  '        FAILED = "failed"',
  '    class Priority(models.IntegerChoices):',
  '        HIGH = 1',
  '    STATUS_DEAD = "dead"',
  '    status = models.CharField(max_length=16, choices=Status.choices)',
  '    locked_until = models.DateTimeField(null=True)',
  '    class Meta:',
  '        db_table = "jobs"',
];

function parse(lines: string[]): FileModel {
  return pythonFrontEnd.parse(lines.join('\n') + '\n', '/virtual/worker.py', {});
}

/** The row writes of the file's sites, in order. */
const writes = (model: FileModel): RowWrite[] => model.sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.rowWrites));
const show = (w: RowWrite) => ({
  set: w.assignments.map((a) => [a.column, a.value.kind === 'literal' ? a.value.value : a.value.kind === 'expression' ? (a.value.strings ?? []).join('|') : a.value.kind]),
  where: w.where.map((c) => `${c.column} ${c.op}${c.underOr ? ' (or)' : ''}`),
});

describe('Django queue reading', () => {
  test('choices members, class constants and Enum .value are the literals they store', () => {
    const model = parse([
      ...MODEL,
      'def finish(job_id):',
      '    Job.objects.filter(id=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING.value]).update(status=Job.Status.DONE)',
      '    Job.objects.filter(id=job_id).update(status=Job.STATUS_DEAD, priority=Job.Priority.HIGH)',
    ]);
    const [done, dead] = writes(model).map(show);
    assert.deepEqual(done.set, [['status', 'done']]);
    assert.deepEqual(done.where, ['id =', 'status in']);
    assert.deepEqual(model.sites[0].analysis.statements[0].rowWrites[0].where[1].value, { kind: 'expression', functions: [], strings: ['queued', 'running'] });
    assert.deepEqual(dead.set, [['status', 'dead'], ['priority', 1]]);
  });

  test('a constant of a models module of the project, imported', () => {
    const root = mkdtempSync(join(tmpdir(), 'pgq-django-'));
    const files: Record<string, string> = { 'manage.py': '', 'app/__init__.py': '', 'app/models.py': MODEL.join('\n') + '\n' };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    clearProjectCache();
    clearDjangoCache();
    const model = pythonFrontEnd.parse('from django.utils import timezone\nfrom app.models import Job\ndef run(job_id):\n    Job.objects.filter(id=job_id).update(status=Job.Status.RUNNING)\n', join(root, 'app/worker.py'), {});
    assert.deepEqual(writes(model).map(show)[0].set, [['status', 'running']]);
  });

  test('`A if ok else B` is the CASE of both states', () => {
    const model = parse([...MODEL, 'def finish(job_id, ok):', '    Job.objects.filter(id=job_id).update(status=Job.Status.DONE if ok else Job.Status.FAILED)']);
    assert.deepEqual(writes(model).map(show)[0].set, [['status', 'done|failed']]);
  });

  test('Case(When(..., then=Value(...)), default=Value(...)) is the CASE of its states, reading the columns its conditions test', () => {
    const model = parse([
      'from django.db.models import Case, Value, When',
      ...MODEL,
      'def fail(job_id):',
      '    Job.objects.filter(id=job_id).update(status=Case(When(attempts__gte=5, then=Value(Job.STATUS_DEAD)), default=Value("queued")))',
    ]);
    const status = writes(model)[0].assignments[0];
    const { cases, ...value } = status.value as Extract<typeof status.value, { kind: 'expression' }>;
    assert.deepEqual(value, { kind: 'expression', columns: ['attempts'], functions: [], strings: ['dead', 'queued'] });
    // Read branch by branch too: which rows get 'dead'.
    assert.deepEqual(cases?.map((b) => [b.when?.map((c) => `${c.column} ${c.op}`), b.strings]), [
      [['attempts >='], ['dead']],
      [undefined, ['queued']],
    ]);
  });

  test('Q objects: | and & as OR and AND; a ~Q is left out', () => {
    const model = parse([
      'from django.db.models import Q',
      ...MODEL,
      'def sweep(now):',
      '    Job.objects.filter(Q(locked_until__isnull=True) | Q(locked_until__lt=now), ~Q(status="done")).update(status="queued")',
    ]);
    assert.deepEqual(writes(model).map(show)[0].where, ['locked_until is null (or)', 'locked_until < (or)']);
  });

  test('a compare-and-set on a column the update swaps takes the read\'s conditions; a fence on another column does not', () => {
    const model = parse([
      'from datetime import timedelta',
      'from django.utils import timezone',
      ...MODEL,
      'def claim():',
      '    now = timezone.now()',
      '    for job in Job.objects.filter(locked_until__lt=now, status=Job.Status.QUEUED)[:5]:',
      '        old = job.locked_until',
      '        if Job.objects.filter(id=job.id, locked_until=old).update(locked_until=now + timedelta(minutes=5), status=Job.Status.RUNNING):',
      '            return job',
      'def finish_first():',
      '    job = Job.objects.filter(status=Job.Status.RUNNING).first()',
      '    Job.objects.filter(id=job.id, locked_until=job.locked_until).update(status=Job.Status.DONE)',
    ]);
    const [claim, finish] = writes(model).map(show);
    assert.deepEqual(claim.where, ['id =', 'locked_until =', 'locked_until <', 'status =']);
    assert.deepEqual(finish.where, ['id =', 'locked_until =']);
  });

  test("a custom manager's get_queryset() and queryset methods add their filters, read from the models module", () => {
    const root = mkdtempSync(join(tmpdir(), 'pgq-django-'));
    const files: Record<string, string> = {
      'manage.py': '',
      'shop/__init__.py': '',
      'shop/models.py': [
        'from django.db import models',
        'from django.utils import timezone',
        'class TaskQuerySet(models.QuerySet):',
        '    def ready(self):',
        '        return self.filter(models.Q(lease_end__isnull=True) | models.Q(lease_end__lt=timezone.now()), state=Task.State.WAITING)',
        '    def of_shop(self, shop_id):',
        '        return self.ready().filter(shop_id=shop_id)',
        'class TaskManager(models.Manager):',
        '    def get_queryset(self):',
        '        return super().get_queryset().filter(archived=False)',
        'class Task(models.Model):',
        '    class State(models.TextChoices):',
        '        WAITING = "waiting"',
        '    state = models.CharField(max_length=16, choices=State.choices)',
        '    objects = TaskManager.from_queryset(TaskQuerySet)()',
      ].join('\n') + '\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), text);
    }
    clearProjectCache();
    clearDjangoCache();
    const model = pythonFrontEnd.parse(
      'from django.db import transaction\nfrom shop.models import Task\ndef take(shop_id):\n    with transaction.atomic():\n        return Task.objects.of_shop(shop_id).select_for_update(skip_locked=True).first()\n',
      join(root, 'shop/worker.py'),
      {},
    );
    const read = model.sites.flatMap((s) => s.analysis.statements.flatMap((st) => st.lockingReads))[0];
    assert.deepEqual(
      read.where.map((c) => `${c.column} ${c.op}${c.underOr ? ' (or)' : ''}${c.value.kind === 'literal' ? ` ${String(c.value.value)}` : ''}`),
      ['archived = false', 'lease_end is null (or) null', 'lease_end < (or)', 'state = waiting', 'shop_id ='],
    );
  });
  test('a Q bound to a name, and a queryset kept in a name, are read as if written at the call', () => {
    const model = parse([
      'from django.db.models import Q',
      'from django.utils import timezone',
      ...MODEL,
      'def claim(job_id, cutoff):',
      '    now = timezone.now()',
      '    idle = Q(locked_until__isnull=True) | Q(locked_until__lt=cutoff)',
      '    rows = Job.objects.filter(idle, id=job_id)',
      '    rows.update(status=Job.Status.RUNNING, locked_until=now)',
      'def drop(job_id):',
      '    stale = Job.objects.filter(id=job_id, status=Job.Status.DONE)',
      '    stale.delete()',
      'def forget(job_id):',
      '    job = Job.objects.filter(id=job_id).first()',
      '    job.delete()',
    ]);
    const [claim, drop, forget] = writes(model).map(show);
    assert.deepEqual(claim.where, ['locked_until is null (or)', 'locked_until < (or)', 'id =']);
    assert.deepEqual(claim.set.map(([column]) => column), ['status', 'locked_until']);
    assert.deepEqual(drop.where, ['id =', 'status =']);
    // An instance the code read is deleted by its id, as before.
    assert.deepEqual(forget.where, ['id =']);
  });

  test('a manager method that keeps its queryset and its Q objects in names adds their conditions', () => {
    const model = parse([
      'from datetime import timedelta',
      'from django.db import models',
      'from django.db.models import Q',
      'from django.utils import timezone',
      'class TicketManager(models.Manager):',
      '    def free(self, at):',
      '        rows = self.get_queryset()',
      '        stale = at - timedelta(seconds=900)',
      '        idle = Q(holder__isnull=True) | Q(held_since__lt=stale)',
      '        return rows.filter(idle)',
      ...MODEL.slice(1),
      '    objects = TicketManager()',
      'def hold(job_id, holder):',
      '    at = timezone.now()',
      '    Job.objects.free(at).filter(id=job_id).update(locked_until=at)',
    ]);
    assert.deepEqual(writes(model).map(show)[0].where, ['id =', 'holder is null (or)', 'held_since < (or)']);
  });
});
