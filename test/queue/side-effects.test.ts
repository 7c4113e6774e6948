// no-side-effects-in-locking-transaction on the model: a front end reports an
// outside-world call and its transaction; the rule weighs it against the
// statements of that transaction before the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activeRules } from '../../src/engine/rule-config.ts';
import { rules as allRules } from '../../rules/index.ts';
import { runRules } from '../../src/engine/run-rules.ts';
import { emptyFileModel, type FileModel, type Scope } from '../../src/model/index.ts';
import { analyzeSql, loadSqlParser } from '../../src/sql/index.ts';
import { sqlFrontEnd } from '../../src/languages/sql/index.ts';

await loadSqlParser();

const RULE = 'no-side-effects-in-locking-transaction';
const only = () => activeRules(Object.fromEntries(activeRules().map(({ rule }) => [rule.id, rule.id === RULE ? 'error' : 'off'])), allRules);

/** A TS-like file: each `sql` placeholder becomes a site in `scope`, each `call` a side effect. */
function model(parts: ({ sql: string; scope: Scope } | { call: string; scope: Scope } | string)[]): FileModel {
  let text = '';
  const file = emptyFileModel('job.ts', 'typescript', '');
  for (const part of parts) {
    if (typeof part === 'string') {
      text += part;
    } else if ('sql' in part) {
      const start = text.length + 1;
      text += `\`${part.sql}\`;\n`;
      const analysis = analyzeSql(part.sql);
      for (const s of analysis.statements) {
        s.span = { start: s.span.start + start, end: s.span.end + start };
        for (const c of s.calls ?? []) c.span = { start: c.span.start + start, end: c.span.end + start };
      }
      file.sites.push({ span: { start, end: start + part.sql.length }, analysis, scope: part.scope, connection: { kind: 'pooled-client' }, driver: 'pg' });
    } else {
      const start = text.length;
      text += `await ${part.call}(x);\n`;
      file.sideEffects.push({ span: { start: start + 6, end: start + 6 + part.call.length }, callee: part.call, scope: part.scope });
    }
  }
  file.text = text;
  return file;
}

const tx: Scope = { kind: 'transaction', id: 'job.ts#tx1', form: 'BEGIN', rollsBackOnError: true };
const other: Scope = { kind: 'transaction', id: 'job.ts#tx2', form: 'BEGIN', rollsBackOnError: true };
const claim = "select id from jobs where status = 'queued' for update skip locked limit 1";

test('a fetch after SELECT ... FOR UPDATE in the same transaction', () => {
  const findings = runRules(model([{ sql: claim, scope: tx }, { call: 'fetch', scope: tx }]), only());
  assert.deepEqual(findings.map((f) => [f.ruleId, f.line, f.column]), [[RULE, 2, 7]]);
  assert.match(findings[0].message, /'fetch' runs inside a transaction that has locked rows \(line 1\)/);
  assert.match(findings[0].message, /0\.7 ms → 8\.3 ms/);
});

test('a mail sent after an UPDATE in the transaction', () => {
  const findings = runRules(model([{ sql: "update jobs set status = 'done' where id = $1", scope: tx }, { call: 'transporter.sendMail', scope: tx }]), only());
  assert.match(findings[0].message, /has written rows/);
});

test('quiet: the call before the first locking statement, in another transaction, or in autocommit', () => {
  assert.deepEqual(runRules(model([{ call: 'fetch', scope: tx }, { sql: claim, scope: tx }]), only()), []);
  assert.deepEqual(runRules(model([{ sql: claim, scope: tx }, { call: 'fetch', scope: other }]), only()), []);
  assert.deepEqual(runRules(model([{ sql: claim, scope: { kind: 'autocommit' } }, { call: 'fetch', scope: { kind: 'autocommit' } }]), only()), []);
  assert.deepEqual(runRules(model([{ sql: 'select 1', scope: tx }, { call: 'fetch', scope: tx }]), only()), []);
});

test('TS side effects by name: brokers, object stores and HTTP clients, not look-alikes', async () => {
  const { typescriptSideEffect } = await import('../../src/languages/typescript/side-effects.ts');
  for (const name of ['redis.xadd', 'this.redis.lPush', 'producer.send', 'this.kafkaProducer.sendBatch', 's3.send', 's3Client.send', 'emailQueue.add', 'axios.post', 'got.post', 'request', 'undici.fetch', 'apiClient.post', 'this.http.put', 'webhookClient.post', 'stripe.charges.create', 'sqsClient.send']) {
    assert.ok(typescriptSideEffect(name), name);
  }
  for (const name of ['client.query', 'router.post', 'app.post', 'map.set', 'cache.get', 'queue.push', 'list.add', 'socket.send', 'res.send', 'client.get', 'logger.info']) {
    assert.ok(!typescriptSideEffect(name), name);
  }
});

test('Python side effects by name: a method on a receiver named for an HTTP client, a producer or S3', async () => {
  const { pythonSideEffect } = await import('../../src/languages/python/flow/side-effects.ts');
  const yes: [string | undefined, string, string | undefined][] = [
    [undefined, 'xadd', 'cache'], [undefined, 'lpush', 'self.redis'], [undefined, 'send', 'producer'], [undefined, 'send_and_wait', 'self.producer'],
    [undefined, 'upload_file', 's3'], [undefined, 'put_object', 'bucket'], [undefined, 'post', 'http'], [undefined, 'get', 'self.api_client'],
    [undefined, 'post', 'session'], [undefined, 'post', 'client'], ['httpx.post', 'post', 'httpx'],
  ];
  for (const [qualified, method, receiver] of yes) assert.ok(pythonSideEffect(qualified, method, receiver), `${receiver}.${method}`);
  // SQLAlchemy sessions and Redis clients: get/delete/execute are the database's or a read.
  const no: [string, string][] = [['get', 'session'], ['delete', 'session'], ['execute', 'session'], ['get', 'client'], ['send', 'socket'], ['post', 'router'], ['add', 'session']];
  for (const [method, receiver] of no) assert.equal(pythonSideEffect(undefined, method, receiver), undefined, `${receiver}.${method}`);
});

test('SQL that calls out itself: http_post and dblink_exec after the claim, not pg_net (queued until the commit)', () => {
  const findings = runRules(
    model([
      { sql: claim, scope: tx },
      { sql: "select http_post('https://hooks.example.com', '{}', 'application/json')", scope: tx },
      { sql: "select dblink_exec('audit', 'insert into sent (id) values (1)')", scope: tx },
      { sql: "select net.http_post(url := 'https://hooks.example.com', body := '{}'::jsonb)", scope: tx },
    ]),
    only(),
  );
  assert.deepEqual(findings.map((f) => [f.line, f.column]), [[2, 9], [3, 9]]);
  assert.match(findings[0].message, /'http_post' runs inside a transaction that has locked rows \(line 1\)/);
  // Before the claim, or in autocommit: nothing is held.
  assert.deepEqual(runRules(model([{ sql: "select http_post('https://x', '{}', 'application/json')", scope: tx }, { sql: claim, scope: tx }]), only()), []);
});

test('SQL that calls out through the file\'s own routines: followed a few calls deep, by bare or qualified name; recursion and pg_net stay quiet', () => {
  const sqlModel = (text: string) => sqlFrontEnd.parse(text, 'drain.sql', {});
  const routine = (name: string, body: string) => `create function ${name}() returns void language plpgsql as $$ begin ${body}; end $$;\n`;
  const drain = (call: string) =>
    `create function drain() returns void language plpgsql as $$ declare j record; begin for j in select id from jobs for update skip locked loop perform ${call}(); end loop; end $$;\n`;
  const chain = routine('app.hook', "perform http_post('https://x', '{}', 'application/json')") + routine('deliver', 'perform app.hook()') + routine('loop_a', 'perform loop_a()');
  const messages = (text: string) => runRules(sqlModel(text), only()).map((f) => f.message.slice(0, f.message.indexOf(', and runs')));
  assert.deepEqual(messages(chain + drain('deliver')), ["'deliver' calls 'app.hook', which calls 'http_post'"]);
  assert.deepEqual(messages(chain + drain('hook')), ["'hook' calls 'http_post'"]);
  assert.deepEqual(messages(chain + drain('loop_a')), []);
  assert.deepEqual(messages(routine('queue_hook', "perform net.http_post(url := 'https://x')") + drain('queue_hook')), []);
  // Five calls deep is past the bound: unknown, quiet.
  const deep = routine('f0', "perform http_post('https://x', '', 'text/plain')") + [1, 2, 3, 4, 5].map((n) => routine(`f${n}`, `perform f${n - 1}()`)).join('');
  assert.deepEqual(messages(deep + drain('f2')).length, 1);
  assert.deepEqual(messages(deep + drain('f5')), []);
});

test('a PL/pgSQL wait reached only where the locking statement found nothing (IF FOUND / IF NOT FOUND / EXIT WHEN FOUND) holds none of its locks', () => {
  const lines = (body: string, declare = 'r record; v bigint;') =>
    runRules(sqlFrontEnd.parse(`create function take(n int) returns setof record language plpgsql as $$\ndeclare ${declare}\nbegin\n${body}\nend $$;\n`, 'take.sql', {}), only()).map(
      (f) => `${f.line}:${/\(line (\d+)\)/.exec(f.message)?.[1]}`,
    );
  const claim = "update tasks set state = 'busy' where id in (select id from tasks where state = 'new' order by id limit n for update skip locked) returning id";
  // The poll loop: the claim built at run time, its rows returned; the sleep runs on the round that locked nothing.
  const dynamic = `loop\n  for r in execute format('${claim.replace(/'/g, "''").replace('tasks', '%I').replace('tasks', '%I')}', 'tasks', 'tasks') using n loop\n    return next r;\n  end loop;\n  if found then\n    return;\n  else\n    perform pg_sleep(0.5);\n  end if;\nend loop;`;
  assert.deepEqual(lines(dynamic), []);
  assert.deepEqual(lines(`loop\n  ${claim} into v;\n  exit when found;\n  perform pg_sleep(0.5);\nend loop;\nreturn;`), []);
  assert.deepEqual(lines(`loop\n  ${claim} into v;\n  if not found then\n    perform pg_sleep(0.5);\n  else\n    return;\n  end if;\nend loop;`), []);
  // Out of any loop the claim ran once: its NOT FOUND branch locked nothing.
  assert.deepEqual(lines(`${claim} into v;\nif not found then\n  perform pg_sleep(0.5);\nend if;\nreturn;`), []);
  // A round that found rows goes on in the loop (no RETURN or EXIT): a later round waits with them locked.
  assert.deepEqual(lines(`loop\n  ${claim} into v;\n  if not found then\n    perform pg_sleep(0.5);\n  end if;\nend loop;`), ['7:5']);
  // EXIT of the inner loop only: the outer one claims again with the rows still locked.
  assert.deepEqual(lines(`loop\n  loop\n    ${claim} into v;\n    exit when found;\n    perform pg_sleep(0.5);\n  end loop;\nend loop;`), ['8:6']);
  // A wait after rows were locked stays reported.
  assert.deepEqual(lines(`${claim} into v;\nif found then\n  perform pg_sleep(0.5);\nend if;\nreturn;`), ['6:4']);
  assert.deepEqual(lines(`${claim} into v;\nif not found then\n  return;\nend if;\nperform pg_sleep(0.5);\nreturn;`), ['8:4']);
  // FOUND set again by another statement in between: it says nothing of the claim.
  assert.deepEqual(lines(`${claim} into v;\nperform 1 from tasks where state = 'held';\nif not found then\n  perform pg_sleep(0.5);\nend if;\nreturn;`), ['7:4']);
  // An earlier claim that did lock rows is still held while the second finds nothing.
  assert.deepEqual(lines(`select id into v from tasks where state = 'new' limit 1 for update;\n${claim} into v;\nif not found then\n  perform pg_sleep(0.5);\nend if;\nreturn;`), ['7:4']);
});
