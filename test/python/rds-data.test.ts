// The Python front end's model of the Aurora Data API (boto3 / aioboto3
// `rds-data`): the client is a pool of the service's connections; a call
// without a transactionId runs alone on any of them (committed by the
// service); the calls that pass a begin_transaction's id run in that
// transaction until commit_transaction or rollback_transaction. Facts from
// the AWS documentation; the Data API cannot be run here.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { loadSqlParser } from '../../src/sql/index.ts';
import { parse, siteWith } from './support/sites.ts';

before(async () => {
  await loadSqlParser();
});



const header = ['import boto3', 'ARN = "arn:cluster"', 'SECRET = "arn:secret"', 'rds = boto3.client("rds-data")'];

describe('boto3 rds-data (the Aurora Data API)', () => {
  test('the client is a pool of the service in autocommit; a call without a transactionId runs alone on any of its connections', () => {
    const model = parse([
      ...header,
      'def job(tenant_id):',
      '    rds.execute_statement(resourceArn=ARN, secretArn=SECRET, sql="select set_config(\'app.tenant\', :tenant, false)",',
      '        parameters=[{"name": "tenant", "value": {"stringValue": tenant_id}}])',
    ]);
    assert.deepEqual(
      model.connections.map((c) => [c.driver, c.kind, c.autocommit, c.preparedStatements]),
      [['rds-data', 'pool', true, 'unknown']],
    );
    const site = siteWith(model, 'set_config');
    assert.deepEqual([site.driver, site.connection.kind, site.connection.configId, site.scope.kind], ['rds-data', 'pool', model.connections[0].id, 'autocommit']);
    // :tenant is $1, bound by its name in parameters=[...].
    assert.deepEqual(site.params, [{ kind: 'caller-parameter', name: 'tenant_id' }]);
  });

  test('begin_transaction opens a transaction that the calls with its id run in, until commit_transaction', () => {
    const model = parse([
      ...header,
      'def job():',
      '    tx = rds.begin_transaction(resourceArn=ARN, secretArn=SECRET)["transactionId"]',
      '    rds.execute_statement(resourceArn=ARN, secretArn=SECRET, sql="SET LOCAL app.tenant = \'1\'", transactionId=tx)',
      '    rds.execute_statement(resourceArn=ARN, secretArn=SECRET, sql="select 1 as alone")',
      '    rds.execute_statement(resourceArn=ARN, secretArn=SECRET, sql="update invoices set closed = true", transactionId=tx)',
      '    rds.commit_transaction(resourceArn=ARN, secretArn=SECRET, transactionId=tx)',
      '    response = rds.begin_transaction(resourceArn=ARN, secretArn=SECRET)',
      '    rds.batch_execute_statement(resourceArn=ARN, secretArn=SECRET, sql="delete from jobs where id = :id", parameterSets=[], transactionId=response["transactionId"])',
      '    rds.rollback_transaction(resourceArn=ARN, secretArn=SECRET, transactionId=response.get("transactionId"))',
    ]);
    const local = siteWith(model, 'SET LOCAL');
    const update = siteWith(model, 'update invoices');
    assert.ok(local.scope.kind === 'transaction' && /rds\.begin_transaction\(\)/.test(local.scope.form), JSON.stringify(local.scope));
    assert.deepEqual(update.scope, local.scope, 'one transaction');
    assert.equal(local.connection.kind, 'pooled-client');
    assert.equal(siteWith(model, 'select 1 as alone').scope.kind, 'autocommit');
    const batch = siteWith(model, 'delete from jobs');
    assert.ok(batch.scope.kind === 'transaction' && local.scope.kind === 'transaction' && batch.scope.id !== local.scope.id, 'a second transaction');
  });

  test('a transactionId the file does not see begun (a parameter), or **options that may hold one: a transaction of unknown scope', () => {
    const model = parse([
      ...header,
      'def run(tx):',
      '    rds.execute_statement(resourceArn=ARN, secretArn=SECRET, sql="SET LOCAL app.tenant = \'1\'", transactionId=tx)',
      'def run_with(options):',
      '    rds.execute_statement(sql="SET LOCAL app.tenant = \'2\'", **options)',
    ]);
    assert.equal(siteWith(model, "'1'").scope.kind, 'unknown');
    const splat = siteWith(model, "'2'");
    assert.deepEqual([splat.scope.kind, splat.connection.kind], ['unknown', 'unknown']);
  });

  test("aioboto3's async with session.client('rds-data'), a client in self, and other services", () => {
    const model = parse([
      'import aioboto3, boto3',
      'class Repo:',
      '    def __init__(self):',
      '        self.client = boto3.session.Session().client(service_name="rds-data")',
      '        self.s3 = boto3.client("s3")',
      '    def count(self):',
      '        return self.client.execute_statement(resourceArn="a", secretArn="s", sql="select count(*) from invoices")',
      '    def other(self):',
      '        return self.s3.execute_statement(sql="select 2")',
      'async def job():',
      '    async with aioboto3.Session().client("rds-data") as client:',
      '        tx = (await client.begin_transaction(resourceArn="a", secretArn="s"))["transactionId"]',
      '        await client.execute_statement(resourceArn="a", secretArn="s", sql="select 3", transactionId=tx)',
    ]);
    assert.equal(model.connections.filter((c) => c.driver === 'rds-data').length, 2);
    assert.equal(siteWith(model, 'count(*)').connection.kind, 'pool');
    assert.ok(!model.sites.some((s) => model.text.slice(s.span.start, s.span.end).includes('select 2')), 'an s3 client runs no SQL');
    assert.equal(siteWith(model, 'select 3').scope.kind, 'transaction');
  });
});

describe('a client handed in', () => {
  test("a parameter typed with boto3-stubs' RDSDataServiceClient is a client of the service", () => {
    const model = parse([
      'from mypy_boto3_rds_data import RDSDataServiceClient',
      'def job(client: RDSDataServiceClient, tenant):',
      '    client.execute_statement(resourceArn="a", secretArn="s", sql="select set_config(\'app.tenant\', :t, false)")',
    ]);
    const site = siteWith(model, 'set_config');
    assert.deepEqual([site.driver, site.connection.kind, site.scope.kind], ['rds-data', 'pool', 'autocommit']);
    assert.deepEqual(model.connections.map((c) => [c.driver, c.autocommit]), [['rds-data', true]]);
  });
});

describe('the registry', () => {
  test('importing boto3 says nothing of the file\'s database (only its client("rds-data") calls do); a database driver it imports is the file\'s', async () => {
    const { fileDriverOf } = await import('../../src/languages/python/drivers/index.ts');
    assert.equal(fileDriverOf(new Set(['boto3'])), 'unknown');
    assert.equal(fileDriverOf(new Set(['aioboto3'])), 'unknown');
    assert.equal(fileDriverOf(new Set(['boto3', 'psycopg'])), 'psycopg');
    assert.equal(fileDriverOf(new Set(['boto3', 'sqlalchemy'])), 'sqlalchemy');
  });

  test("a file that imports boto3 for another service still reads an asyncpg pool made elsewhere", () => {
    const model = parse([
      'import boto3',
      'from app.db import get_pool',
      's3 = boto3.client("s3")',
      'async def job(tenant):',
      '    async with get_pool().acquire() as conn:',
      '        await conn.execute("select set_config(\'app.tenant\', $1, false)", tenant)',
      '        return await conn.fetchval("select count(*) from invoices")',
    ]);
    assert.equal(siteWith(model, 'set_config').driver, 'asyncpg');
  });
});
