// Real-repository shapes for `npm run bench -- --shapes`, generated from a
// fixed seed (no third-party code): what made the scan slow on real projects
// that the uniform bench tree (generate.ts) does not have.
//
//   bundle      a small app with a vendored, minified 10 MB JS bundle (very long lines)
//   migrations  many small SQL migration files (DDL, PL/pgSQL functions, backfills)
//   python      a Python app (psycopg workers, services, views, plain helpers)
//   monorepo    a TS monorepo on node-postgres: packages whose handlers import services,
//               repositories and the pool through chains of project imports
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { prng } from '../test/helpers/prng.ts';

export const SHAPES_VERSION = 2;
export const SHAPE_NAMES = ['bundle', 'migrations', 'python', 'monorepo'] as const;
export type ShapeName = (typeof SHAPE_NAMES)[number];

export interface Shape {
  name: ShapeName;
  root: string;
  files: number;
  bytes: number;
  /** What the shape holds, in a few words. */
  summary: string;
  /** Files a user would name on the command line (the bundle). */
  named?: string[];
}

const WORDS = 'account order invoice customer payment report user session token cache queue job worker tenant batch export record entry item total amount price status event message audit metric retry limit page cursor filter field value result error config profile address region rate product stock shipment label document'.split(' ');

type Random = () => number;
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];
const word = (random: Random) => pick(random, WORDS);
const camel = (random: Random) => {
  const b = word(random);
  return word(random) + b[0].toUpperCase() + b.slice(1);
};
const pascal = (random: Random) => {
  const c = camel(random);
  return c[0].toUpperCase() + c.slice(1);
};

class Writer {
  files = 0;
  bytes = 0;
  constructor(readonly root: string) {}
  write(rel: string, text: string): void {
    const path = join(this.root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    this.files++;
    this.bytes += Buffer.byteLength(text);
  }
}

// ---- bundle ----------------------------------------------------------------------------------

/** One webpack-style module of minified code, with the words the rules' triggers look for. */
function minifiedModule(random: Random, id: number): string {
  const n = () => Math.floor(random() * 5000);
  const s = () => JSON.stringify(word(random));
  const bodies = [
    `function(t,e,n){"use strict";var r=n(${n()}),o=n(${n()});t.exports=function(t){return t&&t.update?t.update(r.set(${s()},e)):o.delete(t),void 0}}`,
    `function(t,e,n){var r=n(${n()});e.default={name:${s()},data:function(){return{items:[],offset:0,selected:null}},methods:{update:function(t){var e=this;return r.merge(this.items,t).then(function(n){e.items=n,e.offset+=n.length})},release:function(){this.items=[]}}}}`,
    `function(t,e,n){"use strict";Object.defineProperty(e,"__esModule",{value:!0});var r=n(${n()});e.query=function(t,e){return r.send("UPDATE ${word(random)}s SET status = $1 WHERE id = $2",[t,e])},e.remove=function(t){return r.send("DELETE FROM ${word(random)}s WHERE id = $1",[t])}}`,
    `function(t,e,n){var r=n(${n()}),o=n(${n()}),i=function(t,e){for(var n=0,r=t.length;n<r;n++)if(e(t[n],n))return t[n];return null};t.exports={find:i,map:function(t,e){return t.map(function(t,n){return e(t,n)})},insert:function(t,e,n){return t.splice(e,0,n),t},set:o.set}}`,
    `function(t,e){t.exports=function(t,e,n){return e in t?Object.defineProperty(t,e,{value:n,enumerable:!0,configurable:!0,writable:!0}):t[e]=n,t}}`,
  ];
  return `${id}:${pick(random, bodies)}`;
}

/** A minified bundle of about `size` bytes: long lines of modules, a newline every few hundred. */
function minifiedBundle(random: Random, size: number): string {
  const parts = ['/*! vendored app bundle */\n!function(){var modules={'];
  let length = parts[0].length;
  let id = 0;
  while (length < size) {
    const line: string[] = [];
    for (let i = 0; i < 120; i++) line.push(minifiedModule(random, id++));
    const text = line.join(',') + ',\n';
    parts.push(text);
    length += text.length;
  }
  parts.push(`${id}:function(){}};window.__modules=modules}();\n`);
  return parts.join('');
}

function generateBundle(w: Writer, random: Random): { summary: string; named: string[] } {
  w.write('package.json', JSON.stringify({ name: 'shop-frontend', private: true, type: 'module' }, null, 2));
  for (let i = 0; i < 40; i++) {
    const name = camel(random);
    w.write(`src/${pick(random, ['lib', 'pages', 'components'])}/${name}-${i}.ts`, `import { ${camel(random)} } from './${camel(random)}';\n\nexport function ${name}(items: number[]): number {\n  // Update the totals once the page is set up.\n  return items.reduce((n, x) => n + x, 0);\n}\n`);
  }
  const bundle = 'public/vendor/app.bundle.js';
  w.write(bundle, minifiedBundle(random, 10 * 1024 * 1024));
  return { summary: '40 TS files + a 10 MB minified bundle (public/vendor/app.bundle.js)', named: [bundle] };
}

// ---- SQL migrations --------------------------------------------------------------------------

function migration(random: Random, index: number, tables: string[]): string {
  const table = tables.length > 0 && random() < 0.7 ? pick(random, tables) : undefined;
  const column = `${word(random)}_${word(random)}`;
  const out: string[] = [`-- Migration ${index}: ${word(random)} ${word(random)}.\n`];
  const kind = table ? random() : 0;
  if (!table || kind < 0.2) {
    const name = `${word(random)}_${word(random)}s_${index}`;
    tables.push(name);
    out.push(
      `CREATE TABLE ${name} (\n  id bigserial PRIMARY KEY,\n  tenant_id bigint NOT NULL,\n  ${column} text,\n  status text NOT NULL DEFAULT 'new',\n  attempts integer NOT NULL DEFAULT 0,\n  created_at timestamptz NOT NULL DEFAULT now(),\n  updated_at timestamptz NOT NULL DEFAULT now()\n);\n\n` +
        `CREATE INDEX ${name}_tenant_idx ON ${name} (tenant_id, created_at);\n`,
    );
    if (random() < 0.3) out.push(`\nALTER TABLE ${name} ENABLE ROW LEVEL SECURITY;\nCREATE POLICY ${name}_tenant ON ${name} USING (tenant_id = current_setting('app.tenant_id')::bigint);\n`);
  } else if (kind < 0.45) {
    out.push(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} integer;\n\nUPDATE ${table} SET ${column} = 0 WHERE ${column} IS NULL;\n\nALTER TABLE ${table} ALTER COLUMN ${column} SET DEFAULT 0;\n`);
  } else if (kind < 0.6) {
    out.push(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${table}_${column}_idx ON ${table} (status) WHERE status <> 'done';\n`);
  } else if (kind < 0.8) {
    const fn = `${table}_touch_${index}`;
    out.push(
      `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger\nLANGUAGE plpgsql AS $$\nBEGIN\n  NEW.updated_at := now();\n  IF NEW.status = 'failed' THEN\n    NEW.attempts := NEW.attempts + 1;\n  END IF;\n  RETURN NEW;\nEND;\n$$;\n\n` +
        `CREATE TRIGGER ${fn}_trg BEFORE UPDATE ON ${table}\n  FOR EACH ROW EXECUTE FUNCTION ${fn}();\n`,
    );
  } else if (kind < 0.9) {
    out.push(
      `CREATE OR REPLACE FUNCTION archive_${table}_${index}(p_before timestamptz) RETURNS integer\nLANGUAGE plpgsql AS $$\nDECLARE\n  moved integer;\nBEGIN\n  DELETE FROM ${table} WHERE status = 'done' AND updated_at < p_before;\n  GET DIAGNOSTICS moved = ROW_COUNT;\n  RETURN moved;\nEND;\n$$;\n`,
    );
  } else {
    out.push(`BEGIN;\nUPDATE ${table} SET status = 'new' WHERE status = 'pending';\nDELETE FROM ${table} WHERE created_at < now() - interval '5 years';\nCOMMIT;\n`);
  }
  return out.join('');
}

function generateMigrations(w: Writer, random: Random): { summary: string } {
  const tables: string[] = [];
  const count = 1500;
  for (let i = 1; i <= count; i++) w.write(`db/migrations/${String(i).padStart(5, '0')}_${word(random)}_${word(random)}.sql`, migration(random, i, tables));
  return { summary: `${count} small SQL migrations (DDL, PL/pgSQL, backfills)` };
}

// ---- Python app ------------------------------------------------------------------------------

function pythonFile(random: Random, kind: string, module: string): string {
  const out: string[] = [`"""${word(random)} ${word(random)}: ${kind} of the ${module} module."""\n`, 'import logging\nfrom datetime import datetime, timedelta\n'];
  if (kind === 'worker' || kind === 'repository') out.push('\nimport psycopg\n\nfrom app.db import connect\n');
  out.push('\nlog = logging.getLogger(__name__)\n\n');
  const functions = 4 + Math.floor(random() * 10);
  for (let i = 0; i < functions; i++) {
    const name = `${pick(random, ['load', 'save', 'find', 'update', 'apply', 'compute', 'check'])}_${word(random)}_${word(random)}`;
    if ((kind === 'worker' || kind === 'repository') && random() < 0.4) {
      const table = `${word(random)}s`;
      const sql = pick(random, [
        `SELECT id, payload FROM ${table} WHERE tenant_id = %s AND status = 'new' ORDER BY id LIMIT 100`,
        `UPDATE ${table} SET status = %s, updated_at = now() WHERE id = %s`,
        `INSERT INTO ${table} (tenant_id, payload) VALUES (%s, %s)`,
      ]);
      out.push(
        `\ndef ${name}(tenant_id, value):\n    """${word(random)} the ${word(random)} for one tenant; the caller commits."""\n    with connect() as conn:\n        with conn.transaction():\n            with conn.cursor() as cur:\n                cur.execute("SELECT set_config('app.tenant_id', %s, true)", (str(tenant_id),))\n                cur.execute(\n                    "${sql}",\n                    (tenant_id, value),\n                )\n                return cur.rowcount\n\n`,
      );
    } else {
      out.push(
        `\ndef ${name}(items, limit=${1 + Math.floor(random() * 50)}):\n    # Set up the ${word(random)} before the ${word(random)} is read; offset from the first row.\n    result = []\n    for item in items:\n        if len(result) >= limit:\n            break\n        if item.get("${word(random)}") is not None:\n            result.append({"id": item["id"], "${word(random)}": item.get("${word(random)}", 0)})\n    log.debug("%s ${word(random)}s", len(result))\n    return result\n\n`,
      );
    }
  }
  if (random() < 0.5) {
    out.push(`\nclass ${pascal(random)}Service:\n    def __init__(self, settings):\n        self.settings = settings\n        self.cache = {}\n\n    def update(self, key, value):\n        self.cache.update({key: value})\n        return self.cache\n\n    def delete(self, key):\n        self.cache.pop(key, None)\n`);
  }
  return out.join('');
}

function generatePython(w: Writer, random: Random): { summary: string } {
  w.write('pyproject.toml', '[project]\nname = "billing"\nversion = "1.0.0"\ndependencies = ["psycopg>=3.1"]\n');
  w.write('app/__init__.py', '');
  w.write('app/db.py', '"""The connection the app uses."""\nimport os\n\nimport psycopg\n\n\ndef connect():\n    return psycopg.connect(os.environ["DATABASE_URL"])\n');
  const modules = 40;
  for (let m = 0; m < modules; m++) {
    const module = `${word(random)}_${m}`;
    w.write(`app/${module}/__init__.py`, '');
    for (const kind of ['worker', 'repository', 'service', 'views', 'utils', 'schemas', 'tasks', 'forms', 'admin', 'helpers', 'signals', 'serializers', 'tests_helpers', 'constants']) {
      w.write(`app/${module}/${kind}.py`, pythonFile(random, kind, module));
    }
  }
  return { summary: `a Python app: ${modules} modules of psycopg workers, services, views and helpers` };
}

// ---- TS monorepo -----------------------------------------------------------------------------

function generateMonorepo(w: Writer, random: Random): { summary: string } {
  const packages = 12;
  w.write('package.json', JSON.stringify({ name: 'platform', private: true, workspaces: ['packages/*'] }, null, 2));
  w.write('tsconfig.json', JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022' } }, null, 2));
  for (let p = 0; p < packages; p++) {
    const pkg = `packages/${word(random)}-${p}`;
    w.write(`${pkg}/package.json`, JSON.stringify({ name: `@platform/${word(random)}-${p}`, version: '1.0.0', type: 'module' }, null, 2));
    w.write(`${pkg}/src/db/pool.ts`, `import pg from 'pg';\n\n// One pool for the package; the size comes from the environment.\nexport const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL ?? 10) });\n`);
    w.write(`${pkg}/src/db/index.ts`, `export { pool } from './pool.js';\nexport type Row = Record<string, unknown>;\n`);
    const repos: string[] = [];
    for (let r = 0; r < 14; r++) {
      const entity = `${word(random)}${r}`;
      const table = `${word(random)}_${word(random)}s`;
      repos.push(entity);
      w.write(
        `${pkg}/src/repositories/${entity}.ts`,
        `import { pool } from '../db/index.js';\n\nexport async function find${entity}(tenant: number, id: number) {\n  const client = await pool.connect();\n  try {\n    await client.query('BEGIN');\n    await client.query("select set_config('app.tenant_id', $1, true)", [String(tenant)]);\n    const { rows } = await client.query('select id, status, total from ${table} where id = $1', [id]);\n    await client.query('COMMIT');\n    return rows[0];\n  } catch (error) {\n    await client.query('ROLLBACK');\n    throw error;\n  } finally {\n    client.release();\n  }\n}\n\nexport async function count${entity}(since: Date): Promise<number> {\n  const { rows } = await pool.query('select count(*)::int as n from ${table} where created_at > $1', [since]);\n  return rows[0].n;\n}\n`,
      );
    }
    const services: string[] = [];
    for (let s = 0; s < 20; s++) {
      const service = `${camel(random)}Service${s}`;
      services.push(service);
      const used = [pick(random, repos), pick(random, repos)];
      w.write(
        `${pkg}/src/services/${service}.ts`,
        `import { find${used[0]}, count${used[0]} } from '../repositories/${used[0]}.js';\nimport { find${used[1]} } from '../repositories/${used[1]}.js';\nimport { pool } from '../db/index.js';\n\n// Update the totals once the batch is written; set up the cache first.\nexport async function ${service}(tenant: number, id: number) {\n  const first = await find${used[0]}(tenant, id);\n  const second = await find${used[1]}(tenant, id);\n  const n = await count${used[0]}(new Date(Date.now() - 86_400_000));\n  const client = await pool.connect();\n  try {\n    const { rowCount } = await client.query('select 1 from audit_events where id = $1', [id]);\n    return { first, second, n, seen: rowCount ?? 0 };\n  } finally {\n    client.release();\n  }\n}\n`,
      );
    }
    // Controllers over the services, handlers over the controllers: a handler's chain of project
    // imports is five modules deep, and every module is reached at more than one depth.
    const controllers: string[] = [];
    for (let c = 0; c < 12; c++) {
      const controller = `${camel(random)}Controller${c}`;
      controllers.push(controller);
      const a = pick(random, services);
      const b = pick(random, services);
      w.write(
        `${pkg}/src/controllers/${controller}.ts`,
        `import { ${a} } from '../services/${a}.js';\n${a === b ? '' : `import { ${b} } from '../services/${b}.js';\n`}\nexport async function update${controller}(tenant: number, id: number) {\n  const first = await ${a}(tenant, id);\n  return ${a === b ? 'first' : `{ first, second: await ${b}(tenant, id) }`};\n}\n`,
      );
    }
    for (let h = 0; h < 30; h++) {
      const controller = pick(random, controllers);
      const service = pick(random, services);
      w.write(
        `${pkg}/src/handlers/${camel(random)}-${h}.ts`,
        random() < 0.5
          ? `import { update${controller} } from '../controllers/${controller}.js';\nimport { ${service} } from '../services/${service}.js';\n\nexport async function handle(request: { tenant: number; id: number }) {\n  // The caller has set the tenant from the session; update the view after.\n  const result = await update${controller}(request.tenant, request.id);\n  return { status: 200, body: { result, extra: await ${service}(request.tenant, request.id) } };\n}\n`
          : `import { pool } from '../db/index.js';\nimport { update${controller} } from '../controllers/${controller}.js';\n\nexport async function handle(request: { tenant: number; id: number }) {\n  const client = await pool.connect();\n  try {\n    const { rows } = await client.query('select id from sessions where token = $1', [String(request.id)]);\n    return { status: rows.length > 0 ? 200 : 401, body: await update${controller}(request.tenant, request.id) };\n  } finally {\n    client.release();\n  }\n}\n`,
      );
    }
    for (let j = 0; j < 8; j++) {
      const repo = pick(random, repos);
      w.write(
        `${pkg}/src/jobs/${camel(random)}-${j}.ts`,
        `import { pool } from '../db/index.js';\nimport { count${repo} } from '../repositories/${repo}.js';\n\nexport async function run${j}() {\n  const n = await count${repo}(new Date());\n  const { rows } = await pool.query(\n    \`update jobs set status = 'running', attempts = attempts + 1, locked_until = now() + interval '5 minutes'\n     where id = (select id from jobs where status = 'queued' and attempts < 5 order by id for update skip locked limit 1)\n     returning id, payload\`,\n  );\n  return { n, job: rows[0] };\n}\n`,
      );
    }
    for (let u = 0; u < 60; u++) {
      const fields = Array.from({ length: 4 + Math.floor(random() * 8) }, () => `  ${camel(random)}: ${pick(random, ['string', 'number', 'boolean', 'Date'])};`);
      w.write(
        `${pkg}/src/lib/${camel(random)}-${u}.ts`,
        `/** Plain helpers: no SQL. The offset is counted from the first row; insert keeps order. */\nexport interface ${pascal(random)} {\n${fields.join('\n')}\n}\n\nexport function ${camel(random)}(items: readonly number[], limit = ${1 + Math.floor(random() * 40)}): number[] {\n  const out: number[] = [];\n  for (const item of items) {\n    if (out.length >= limit) break;\n    if (item % ${2 + Math.floor(random() * 7)} === 0) out.push(item);\n  }\n  return out;\n}\n\nexport const cache = new Map<string, number>();\nexport function update(key: string, value: number) {\n  cache.set(key, value);\n  cache.delete(key + ':old');\n}\n`,
      );
    }
  }
  return { summary: `a TS monorepo of ${packages} node-postgres packages (handlers -> controllers -> services -> repositories -> db/index -> db/pool)` };
}

const GENERATORS: Record<ShapeName, (w: Writer, random: Random) => { summary: string; named?: string[] }> = {
  bundle: generateBundle,
  migrations: generateMigrations,
  python: generatePython,
  monorepo: generateMonorepo,
};

/** Generates a shape under `base` unless the same version is there already. */
export function generateShape(base: string, name: ShapeName, seed = 26): Shape {
  const root = join(base, name);
  const manifestPath = join(base, `${name}.json`);
  if (existsSync(manifestPath)) {
    const old = JSON.parse(readFileSync(manifestPath, 'utf8')) as Shape & { version: number; seed: number };
    if (old.version === SHAPES_VERSION && old.seed === seed && existsSync(root)) return old;
  }
  rmSync(root, { recursive: true, force: true });
  const w = new Writer(root);
  const made = GENERATORS[name](w, prng(seed + SHAPE_NAMES.indexOf(name)));
  // A repository of its own: the .gitignore of the folder it is generated in (.pgq-bench/) does not rule it.
  execFileSync('git', ['init', '-q', root], { stdio: 'ignore' });
  const shape: Shape = { name, root, files: w.files, bytes: w.bytes, summary: made.summary, ...(made.named ? { named: made.named.map((n) => join(root, n)) } : {}) };
  writeFileSync(manifestPath, JSON.stringify({ ...shape, version: SHAPES_VERSION, seed }, null, 2));
  return shape;
}
