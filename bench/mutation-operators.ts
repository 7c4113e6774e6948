// The operators of `npm run mutation` (bench/mutation.ts): each is a named, generic transformation
// that turns a correct shape into the bug a rule describes, found by pattern on the lines of a clean
// label. They read no repository's names: a column is a fence or a counter by its spelling's role
// (lock/lease/worker/token, attempt/retry), a statement is BEGIN or ROLLBACK by its SQL.
// An operator returns the edits of each mutant it can make (usually one), or none.

/** One edit of a file, in the original's 1-based lines: remove `remove` lines at `line`, insert `insert` there. */
export interface Edit {
  line: number;
  remove: number;
  insert: string[];
}

export interface Site {
  /** The line the mutation is about (reported in lists). */
  at: number;
  edits: Edit[];
}

export type Range = [number, number];

export interface Operator {
  name: string;
  /** The rules a mutant of this operator must be reported by (one of them, where the label has it). */
  rules: string[];
  find(lines: string[], ranges: Range[]): Site[];
}

const isComment = (text: string): boolean => /^\s*(#|\/\/|--|\/\*|\*)/.test(text);

/** The 1-based line numbers of the ranges, in order, that are not comments. */
function codeLines(lines: string[], ranges: Range[]): number[] {
  const out: number[] = [];
  for (const [a, b] of ranges) for (let n = a; n <= Math.min(b, lines.length); n++) if (!isComment(lines[n - 1])) out.push(n);
  return out;
}

const replaceLine = (n: number, text: string): Edit => ({ line: n, remove: 1, insert: [text] });
const deleteLine = (n: number): Edit => ({ line: n, remove: 1, insert: [] });

/** The first line of the ranges where `pattern` matches, rewritten by `replace`. */
function firstRewrite(lines: string[], ranges: Range[], pattern: RegExp, replace: (match: string, ...groups: string[]) => string): Site[] {
  for (const n of codeLines(lines, ranges)) {
    if (!pattern.test(lines[n - 1])) continue;
    const text = lines[n - 1].replace(pattern, replace);
    if (text !== lines[n - 1]) return [{ at: n, edits: [replaceLine(n, text)] }];
  }
  return [];
}

const flipCase = (word: string, to: string): string => (word === word.toUpperCase() ? to.toUpperCase() : to);

/** A local setting: set_config(..., true) or SET LOCAL. */
const LOCAL_SETTING = /set_config\s*\([^;]*\btrue\b|\bSET\s+LOCAL\b/i;

/** A string literal whose SQL is the statement `word` (BEGIN may carry its modes; ROLLBACK TO is not a ROLLBACK). */
const sqlLiteral = (word: string): RegExp => new RegExp(`(['"\`])\\s*${word}\\b(?!\\s+TO\\b)`, 'i');

/** A line that is one whole call statement (`await c.query('X')`, `c.execute("X")`, a chained `.catch(...)`). */
const wholeStatement = (text: string): boolean => /^\s*(await\s+)?[\w.$]+\s*\(.*\)\s*(\.catch\(.*\))?\s*;?\s*$/.test(text);

/** Python: delete the `with ...transaction():` line and dedent its block by one level. */
function unwrapPythonBlock(lines: string[], n: number): Edit[] {
  const indent = (text: string) => text.length - text.trimStart().length;
  const own = indent(lines[n - 1]);
  const edits: Edit[] = [deleteLine(n)];
  let step = 0;
  for (let k = n + 1; k <= lines.length; k++) {
    const text = lines[k - 1];
    if (!text.trim()) continue;
    if (indent(text) <= own) break;
    step ||= indent(text) - own;
    edits.push(replaceLine(k, text.slice(step)));
  }
  return edits;
}

const PY_TRANSACTION_BLOCK = /^\s*(async\s+)?with\s+[\w.]+\.transaction\(\)\s*(as\s+\w+\s*)?:\s*$/;

/** A column name in the role of a per-claim fence: lock, lease, worker, owner, token, receipt, epoch. */
const FENCE_COLUMN = /(lock|lease|worker|owner|token|receipt|claimed_?by|taken_?by|epoch|handle)\w*$/i;
/** A column name in the role of an attempt counter. */
const COUNTER_COLUMN = /^(\w+_)?(attempts?|attempts?_?count|retr(y|ies)(_?count)?|requeued?_?count|tries|read_ct|deliver(y|ies)_?count)$/i;

export const OPERATORS: Operator[] = [
  {
    name: 'set_config-local-to-session',
    rules: ['no-session-tenant-setting'],
    find: (lines, ranges) =>
      firstRewrite(lines, ranges, /(set_config\s*\((?:[^()]|\([^()]*\))*?,\s*)(true)(\s*\))/i, (_m, head: string, word: string, tail: string) => head + flipCase(word, 'false') + tail),
  },
  {
    name: 'SET-LOCAL-to-SET',
    rules: ['no-session-tenant-setting'],
    find: (lines, ranges) => firstRewrite(lines, ranges, /\b(SET)\s+LOCAL\s+/i, (_m, set: string) => `${set} `),
  },
  {
    name: 'BEGIN-removed',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      // Every BEGIN before the first local setting (both branches of an if/else that picks the modes).
      const code = codeLines(lines, ranges);
      const setting = code.find((n) => LOCAL_SETTING.test(lines[n - 1]));
      if (setting === undefined) return [];
      const begins = code.filter((n) => n < setting && sqlLiteral('BEGIN').test(lines[n - 1]) && wholeStatement(lines[n - 1]));
      return begins.length ? [{ at: begins[0], edits: begins.map(deleteLine) }] : [];
    },
  },
  {
    name: 'transaction-option-removed',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      for (const n of codeLines(lines, ranges)) {
        const text = lines[n - 1];
        if (/^\s*transaction\s*(:\s*[\w.]+)?\s*,?\s*$/.test(text)) return [{ at: n, edits: [deleteLine(n)] }];
        const inline = text.replace(/,\s*\{\s*transaction(\s*:\s*[\w.]+)?\s*\}/, '');
        if (inline !== text) return [{ at: n, edits: [replaceLine(n, inline)] }];
      }
      return [];
    },
  },
  {
    name: 'local-setting-on-outer-handle',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      // `outer.transaction(async (tx) => { tx.query(<local setting>) })`: the setting goes to `outer` instead.
      const code = codeLines(lines, ranges);
      const opener = /([\w.$]+)\.\$?transaction\s*\(\s*(?:\)\s*\.\s*execute\s*\(\s*)?async\s*\(\s*(\w+)/;
      const setting = code.find((k) => LOCAL_SETTING.test(lines[k - 1]));
      if (setting === undefined) return [];
      // The nearest callback above the setting whose parameter the setting's statement uses.
      for (const n of code.filter((k) => k < setting).reverse()) {
        const m = opener.exec(lines[n - 1]);
        if (!m) continue;
        const [, outer, tx] = m;
        // The callback's parameter, or a name it is given (`const t = tx as Client`).
        const names = [tx, ...code.filter((k) => k > n && k < setting).flatMap((k) => [...lines[k - 1].matchAll(new RegExp(`(?:const|let)\\s+(\\w+)\\s*=\\s*${tx}\\b`, 'g'))].map((a) => a[1]))];
        const use = new RegExp(`\\b(?:${names.join('|')})\\.`);
        for (let k = setting; k >= Math.max(n + 1, setting - 3); k--) {
          if (use.test(lines[k - 1])) return [{ at: k, edits: [replaceLine(k, lines[k - 1].replace(use, `${outer}.`))] }];
        }
      }
      return [];
    },
  },
  {
    name: 'batch-transaction-to-Promise.all',
    rules: ['no-local-setting-outside-transaction'],
    find: (lines, ranges) => firstRewrite(lines, ranges, /[\w.$]+\.\$transaction\s*\(\s*\[/, () => 'Promise.all(['),
  },
  {
    name: 'python-transaction-block-removed',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      const n = codeLines(lines, ranges).find((k) => PY_TRANSACTION_BLOCK.test(lines[k - 1]));
      return n === undefined ? [] : [{ at: n, edits: unwrapPythonBlock(lines, n) }];
    },
  },
  {
    name: 'reset-transaction-block-removed',
    rules: ['require-autocommit-in-reset'],
    find(lines, ranges) {
      // Only inside the function the label's lines hand to a pool as `reset=`.
      const code = codeLines(lines, ranges);
      const names = code.flatMap((n) => [...lines[n - 1].matchAll(/\breset\s*=\s*(\w+)/g)].map((m) => m[1]));
      for (const name of names) {
        const def = code.find((n) => new RegExp(`^\\s*(async\\s+)?def\\s+${name}\\s*\\(`).test(lines[n - 1]));
        if (def === undefined) continue;
        const block = code.find((n) => n > def && PY_TRANSACTION_BLOCK.test(lines[n - 1]));
        if (block !== undefined) return [{ at: block, edits: unwrapPythonBlock(lines, block) }];
      }
      return [];
    },
  },
  {
    name: 'autocommit-True-to-False',
    rules: ['require-autocommit-in-reset', 'no-local-setting-outside-transaction'],
    find: (lines, ranges) =>
      firstRewrite(lines, ranges, /(\.autocommit\s*=\s*|set_autocommit\(\s*|\bautocommit\s*=\s*|["']autocommit["']\s*:\s*)True\b/, (_m, head: string) => `${head}False`),
  },
  {
    name: 'prepare_threshold-None-removed',
    rules: ['no-discard-all-with-prepared-statements'],
    find: (lines, ranges) =>
      firstRewrite(lines, ranges, /,?\s*["']?prepare_threshold["']?\s*[:=]\s*None\s*(?=[,})])|["']?prepare_threshold["']?\s*[:=]\s*None\s*,\s*/, () => ''),
  },
  {
    name: 'ROLLBACK-in-catch-removed',
    rules: ['no-release-in-open-transaction'],
    find(lines, ranges) {
      const code = codeLines(lines, ranges);
      for (const n of code) {
        const text = lines[n - 1];
        if (!(sqlLiteral('ROLLBACK').test(text) || /\.rollback\(\)/.test(text))) continue;
        const before = code.filter((k) => k < n && lines[k - 1].trim()).pop();
        if (before === undefined || !/\bcatch\b|\bexcept\b/.test(lines[before - 1])) continue;
        return [neutralise(lines, n)];
      }
      return [];
    },
  },
  {
    name: 'ROLLBACK-before-return-removed',
    rules: ['no-release-in-open-transaction'],
    find(lines, ranges) {
      const code = codeLines(lines, ranges);
      for (const n of code) {
        if (!(sqlLiteral('ROLLBACK').test(lines[n - 1]) || /\.rollback\(\)/.test(lines[n - 1]))) continue;
        const after = code.find((k) => k > n && lines[k - 1].trim());
        if (after !== undefined && /^\s*return\b/.test(lines[after - 1])) return [neutralise(lines, n)];
      }
      return [];
    },
  },
  {
    name: 'nullif-removed',
    rules: ['require-nullif-on-setting-cast'],
    find: (lines, ranges) => firstRewrite(lines, ranges, /nullif\s*\(\s*(current_setting\s*\((?:[^()]|\([^()]*\))*\))\s*,\s*''\s*\)/i, (_m, setting: string) => setting),
  },
  {
    // `col = current_setting(...)` on a text column: the setting goes through uuid (and back to text, so
    // the comparison stays valid), and '' raises.
    name: 'setting-cast-to-uuid',
    rules: ['require-nullif-on-setting-cast'],
    find: (lines, ranges) => firstRewrite(lines, ranges, /(=\s*)(current_setting\s*\([^()]*\))(?!\s*::)/i, (_m, eq: string, setting: string) => `${eq}${setting}::uuid::text`),
  },
  {
    name: 'exception-handler-removed',
    rules: ['require-nullif-on-setting-cast'],
    find(lines, ranges) {
      const code = codeLines(lines, ranges);
      const start = code.find((n) => /^\s*EXCEPTION\s*$/i.test(lines[n - 1]));
      if (start === undefined) return [];
      const end = code.find((n) => n > start && /^\s*END\s*;?\s*$/i.test(lines[n - 1]));
      if (end === undefined) return [];
      return [{ at: start, edits: [{ line: start, remove: end - start, insert: [] }] }];
    },
  },
  {
    name: 'attempts-increment-removed',
    rules: ['require-claim-attempt-limit'],
    find(lines, ranges) {
      const edits: Edit[] = [];
      for (const n of codeLines(lines, ranges)) {
        const text = lines[n - 1];
        // SQL: `attempts = jobs.attempts + 1,` (also inside a CASE) on its own line.
        const sql = /^\s*(\w+)\s*=\s*(.*)$/.exec(text);
        if (sql && COUNTER_COLUMN.test(sql[1]) && new RegExp(`\\b${sql[1]}\\s*\\+\\s*1\\b`).test(sql[2])) {
          edits.push(deleteLine(n));
          // The last item of a SET list: the item before it loses its comma.
          if (!/,\s*$/.test(text) && n > 1 && /,\s*$/.test(lines[n - 2])) edits.push(replaceLine(n - 1, lines[n - 2].replace(/,\s*$/, '')));
          return [{ at: n, edits: edits.sort((a, b) => a.line - b.line) }];
        }
        // An object written by a query builder: `attempt_count: next,` (not a literal).
        const prop = /^\s*['"]?(\w+)['"]?\s*:\s*([^,;]+),?\s*$/.exec(text);
        if (prop && COUNTER_COLUMN.test(prop[1]) && !/^\s*(['"\d]|null\b|number\b|string\b)/.test(prop[2])) edits.push(deleteLine(n));
      }
      return edits.length ? [{ at: edits[0].line, edits }] : [];
    },
  },
  {
    name: 'attempt-limit-removed',
    rules: ['require-claim-attempt-limit'],
    find(lines, ranges) {
      const limit = String.raw`[\w.]+\s*<\s*[\w.]*max\w*`;
      for (const n of codeLines(lines, ranges)) {
        const text = lines[n - 1];
        if (new RegExp(`^\\s*(and\\s+)?${limit}\\s*$`, 'i').test(text)) {
          // A conjunct on its own line; a lone `AND` before it goes with it.
          if (!/^\s*and\b/i.test(text) && n > 1 && /^\s*and\s*$/i.test(lines[n - 2])) return [{ at: n, edits: [{ line: n - 1, remove: 2, insert: [] }] }];
          return [{ at: n, edits: [deleteLine(n)] }];
        }
        const next = text
          .replace(new RegExp(`\\s+and\\s+${limit}`, 'i'), '')
          .replace(new RegExp(`\\bwhere\\s+${limit}\\s+and\\s+`, 'i'), 'where ')
          .replace(new RegExp(`\\s+where\\s+${limit}(?=\\s*($|\\)|;|,))`, 'i'), '');
        if (next !== text) return [{ at: n, edits: [replaceLine(n, next)] }];
      }
      return [];
    },
  },
  {
    name: 'fence-removed',
    rules: ['require-fenced-finish', 'require-lease-heartbeat'],
    find(lines, ranges) {
      // Every conjunct comparing a fence column with a value: `AND locked_by = $2`, a lone `AND`
      // line before `receipt_handle = $3`, ` AND lock_by = $5` inline, `worker_id: w,` in a where object.
      const edits: Edit[] = [];
      const compare = String.raw`([\w.]+)\s*=\s*(?!\s*null\b)[\w$.:]+`;
      let inWhere = false;
      for (const n of codeLines(lines, ranges)) {
        const text = lines[n - 1];
        if (/\.where\s*\(\s*\{/.test(text)) inWhere = true;
        else if (/^\s*\}\s*\)/.test(text)) inWhere = false;
        const own = new RegExp(`^\\s*(and\\s+)?${compare}\\s*[,)]?\\s*$`, 'i').exec(text);
        if (own && FENCE_COLUMN.test(own[2]) && (own[1] || (n > 1 && /^\s*and\s*$/i.test(lines[n - 2])))) {
          if (!own[1]) edits.push(deleteLine(n - 1));
          edits.push(own[0].trimEnd().endsWith(')') ? replaceLine(n, text.replace(/\S.*?(?=\)\s*$)/, '')) : deleteLine(n));
          continue;
        }
        const inline = text.replace(new RegExp(`\\s+and\\s+${compare}`, 'gi'), (m: string, column: string) => (FENCE_COLUMN.test(column) ? '' : m));
        if (inline !== text && /\b(where|and)\b/i.test(text)) {
          edits.push(replaceLine(n, inline));
          continue;
        }
        const prop = /^\s*['"]?(\w+)['"]?\s*:\s*([\w.]+)\s*,?\s*$/.exec(text);
        if (inWhere && prop && FENCE_COLUMN.test(prop[1]) && prop[2] !== 'null') edits.push(deleteLine(n));
      }
      return edits.length ? [{ at: edits[0].line, edits: dedupe(edits) }] : [];
    },
  },
  {
    name: 'transaction-helper-unwrapped',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      // `withTx(client, async () => { <local setting> })` becomes `(async () => { ... })()`: no helper, no BEGIN.
      const code = codeLines(lines, ranges);
      const opener = /\b\w*(?:txn|tx|transaction)\w*\s*\(\s*[\w.]+\s*,\s*(async\s*\(\s*\)\s*=>\s*\{)\s*$/i;
      for (const n of code) {
        const m = opener.exec(lines[n - 1]);
        if (!m || !code.some((k) => k > n && LOCAL_SETTING.test(lines[k - 1]))) continue;
        const indent = /^\s*/.exec(lines[n - 1])![0];
        const close = code.find((k) => k > n && lines[k - 1].startsWith(`${indent}})`));
        if (close === undefined) return [];
        return [{
          at: n,
          edits: [replaceLine(n, lines[n - 1].replace(opener, (_all, fn: string) => `(${fn}`)), replaceLine(close, lines[close - 1].replace('})', '})()'))],
        }];
      }
      return [];
    },
  },
  {
    name: 'session-reset-removed',
    rules: ['no-session-tenant-setting'],
    find(lines, ranges) {
      // Where the range writes a session-level setting, every RESET of a setting in it goes.
      const code = codeLines(lines, ranges);
      const session = code.some((n) => /set_config\s*\([^;]*\bfalse\b/i.test(lines[n - 1]) || /\bSET\s+(?!LOCAL\b)[\w.]+\s*(=|TO)\b/i.test(lines[n - 1]));
      const resets = code.filter((n) => /^\s*RESET\s+[\w.]+\s*;?\s*$/i.test(lines[n - 1]));
      return session && resets.length ? [{ at: resets[0], edits: resets.map(deleteLine) }] : [];
    },
  },
  {
    name: 'NULL-reset-to-value',
    rules: ['no-session-tenant-setting'],
    find(lines, ranges) {
      // set_config(name, NULL, false) clears a setting; with a value ('1': valid SQL wherever the NULL
      // was, in a function with or without arguments) it writes one that outlives the job.
      const code = codeLines(lines, ranges);
      for (const n of code) {
        const inline = lines[n - 1].replace(/(set_config\s*\(\s*[^,()]+,\s*)NULL(\s*,\s*false\s*\))/i, "$1'1'$2");
        if (inline !== lines[n - 1]) return [{ at: n, edits: [replaceLine(n, inline)] }];
        if (/set_config\s*\(\s*$/i.test(lines[n - 1]) && /^\s*NULL\s*,\s*$/i.test(lines[n + 1] ?? '') && /^\s*false\s*$/i.test(lines[n + 2] ?? '')) {
          return [{ at: n + 2, edits: [replaceLine(n + 2, lines[n + 1].replace(/NULL/i, "'1'"))] }];
        }
      }
      return [];
    },
  },
  {
    name: 'builder-fence-removed',
    rules: ['require-fenced-finish', 'require-lease-heartbeat'],
    find(lines, ranges) {
      // A query builder's `and(eq(t.id, id), eq(t.lockedBy, me))` keeps its id comparison only: the
      // finish or heartbeat then matches by id alone, whatever the second comparison's column is.
      const pattern = /\band\(\s*(eq\(\s*[\w.]*?\bid\s*,[^()]*\))\s*,\s*eq\([^()]*\)\s*\)/g;
      const edits: Edit[] = [];
      for (const n of codeLines(lines, ranges)) {
        const text = lines[n - 1].replace(pattern, (_all: string, id: string) => id);
        if (text !== lines[n - 1]) edits.push(replaceLine(n, text));
      }
      // One mutant per statement: a finish and a heartbeat are told apart.
      return edits.map((e) => ({ at: e.line, edits: [e] }));
    },
  },
  {
    name: 'session-statement-in-autocommit',
    rules: ['no-local-setting-outside-transaction'],
    find(lines, ranges) {
      // Python: the local setting's `session.execute(` runs on the session's connection switched to
      // AUTOCOMMIT (SQLAlchemy's execution option), so no transaction holds the setting.
      const code = codeLines(lines, ranges);
      const setting = code.find((k) => LOCAL_SETTING.test(lines[k - 1]));
      if (setting === undefined) return [];
      const option = 'execution_options={"isolation_level": "AUTOCOMMIT"}';
      for (const k of code.filter((n) => Math.abs(n - setting) <= 3)) {
        const m = /\b(await\s+)?([\w.]+)\.execute\(/.exec(lines[k - 1]);
        if (!m || !/\bsession\b/i.test(m[2])) continue;
        const conn = m[1] ? `(await ${m[2]}.connection(${option}))` : `${m[2]}.connection(${option})`;
        return [{ at: k, edits: [replaceLine(k, lines[k - 1].replace(m[0], `${m[1] ?? ''}${conn}.execute(`))] }];
      }
      return [];
    },
  },
  {
    name: 'attempt-budget-check-removed',
    rules: ['require-claim-attempt-limit'],
    find(lines, ranges) {
      // `msg.read_ct <= budget ? keep : drop`: every message is kept, however often it was read.
      const pattern = /[\w.]+\.(\w+)\s*<=?\s*[\w.]+\s*\?\s*([^:?]+?)\s*:\s*[^\]),;]+/;
      for (const n of codeLines(lines, ranges)) {
        const m = pattern.exec(lines[n - 1]);
        if (m && COUNTER_COLUMN.test(m[1])) return [{ at: n, edits: [replaceLine(n, lines[n - 1].replace(m[0], m[2]))] }];
      }
      return [];
    },
  },
  {
    name: 'network-call-moved-before-COMMIT',
    rules: ['no-side-effects-in-locking-transaction'],
    find(lines, ranges) {
      const code = codeLines(lines, ranges);
      const commit = code.find((n) => sqlLiteral('COMMIT').test(lines[n - 1]) || /\.commit\(\)/.test(lines[n - 1]));
      if (commit === undefined) return [];
      const network = /\bfetch\s*\(|\baxios\b|\bhttps?\.(request|get)\b|\brequests\.(get|post|put|patch|delete)\b|\bhttpx\.|\.(publish|xadd|sendMail|send_mail)\s*\(/;
      const call = code.find((n) => n > commit && network.test(lines[n - 1]) && /[;)]\s*$/.test(lines[n - 1]));
      if (call === undefined) return [];
      const indent = /^\s*/.exec(lines[commit - 1])![0];
      return [{ at: call, edits: [{ line: commit, remove: 0, insert: [indent + lines[call - 1].trimStart()] }, deleteLine(call)] }];
    },
  },
];

/** The ROLLBACK at line n stops rolling back: its line goes, or (when its value is used) its SQL becomes `SELECT 1`. */
function neutralise(lines: string[], n: number): Site {
  const text = lines[n - 1];
  if (wholeStatement(text)) return { at: n, edits: [deleteLine(n)] };
  return { at: n, edits: [replaceLine(n, text.replace(sqlLiteral('ROLLBACK'), (_m, q: string) => `${q}SELECT 1`).replace(/\.rollback\(\)/, '.cursor()'))] };
}

function dedupe(edits: Edit[]): Edit[] {
  const seen = new Set<number>();
  return edits.filter((e) => (seen.has(e.line) ? false : (seen.add(e.line), true))).sort((a, b) => a.line - b.line);
}
