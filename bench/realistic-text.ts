// Host code shaped like real repositories for the prefilter bench and its verdict test: written by this
// generator (no copied code), with what made the one automaton slow on real code: many `update` and
// `set` words in ordinary code and comments, and long stretches without ';' (Python, docstrings, JSX),
// where a gap such as [^;]{1,160}? never closes. A few files hold real SQL statements.
import { prng as seeded } from '../test/helpers/prng.ts';

const WORDS = ['update', 'updates', 'settings', 'offset', 'updated_at', 'selected', 'deleted', 'user', 'cache', 'state', 'value', 'items', 'result', 'config', 'count', 'tenant', 'name', 'key'];

const TS_LINES: ((w: () => string, n: () => number) => string)[] = [
  (w) => `  // ${w()} the ${w()} when the ${w()} changes, then ${w()} ${w()}`,
  (w) => `  const ${w()}${w()} = ${w()}.${w()}(${w()}, ${w()})`,
  (w) => `  this.${w()}State({ ${w()}: ${w()}, ${w()}: ${w()}.${w()} })`,
  (w, n) => `  return <div className="${w()}-${w()}" onClick={() => ${w()}(${n()})}>{${w()}.${w()}}</div>`,
  (w) => `  if (${w()}.${w()} && !${w()}) ${w()}.update(${w()})`,
  (w) => `  set${w()}(${w()} => ({ ...${w()}, ${w()} }))`,
  (w) => `   * @param ${w()} the ${w()} to ${w()}; ${w()} it first`,
  (w) => `  map.delete(${w()}); map.set(${w()}, ${w()})`,
];
const PY_LINES: ((w: () => string, n: () => number) => string)[] = [
  (w) => `    # ${w()} the ${w()} so the ${w()} is ${w()} ${w()}`,
  (w) => `    ${w()} = self.${w()}.${w()}(${w()}, ${w()}=${w()})`,
  (w) => `    self.${w()}.update(${w()}, ${w()}.${w()})`,
  (w, n) => `    if ${w()} is not None and ${w()}.${w()} > ${n()}:`,
  (w) => `        ${w()}.set(${w()}, ${w()}.${w()})`,
  (w) => `    """${w()} the ${w()} and ${w()} ${w()} from the ${w()}."""`,
  (w) => `        return {${JSON.stringify(w())}: ${w()}, ${JSON.stringify(w())}: ${w()}}`,
];
const SQL = [
  'UPDATE jobs SET status = $1 WHERE id = $2',
  'SELECT set_config($1, $2, false)',
  'SET LOCAL app.tenant = 42',
  'INSERT INTO events (kind) VALUES ($1)',
  'DELETE FROM sessions WHERE expires_at < now()',
];

/** Source files of `language` adding up to about `targetBytes`; about one in 20 holds a SQL statement. */
export function realisticSources(language: 'typescript' | 'python', targetBytes: number, seed: number): string[] {
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const word = () => pick(WORDS);
  const number = () => Math.floor(random() * 1000);
  const lines = language === 'typescript' ? TS_LINES : PY_LINES;
  const files: string[] = [];
  let total = 0;
  while (total < targetBytes) {
    const count = 20 + Math.floor(random() * 400);
    const body: string[] = [];
    for (let i = 0; i < count; i++) body.push(pick(lines)(word, number));
    if (random() < 0.05) {
      const at = Math.floor(random() * body.length);
      body.splice(at, 0, language === 'typescript' ? `  await client.query('${pick(SQL)}')` : `    cur.execute("${pick(SQL)}")`);
    }
    const file = body.join('\n') + '\n';
    files.push(file);
    total += file.length;
  }
  return files;
}
