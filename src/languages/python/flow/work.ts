// Which calls stand for the job's work: anything but builtins, logging,
// result reading, SQL and value composition (the drivers' own modules).
import { NOT_WORK_MODULES } from '../drivers/index.ts';

const NOT_WORK_FUNCTIONS = new Set([
  'len', 'str', 'int', 'float', 'bool', 'dict', 'list', 'tuple', 'set', 'frozenset', 'print', 'isinstance', 'range',
  'enumerate', 'zip', 'min', 'max', 'sum', 'sorted', 'repr', 'format', 'getattr', 'hasattr', 'setattr', 'iter', 'next',
  'json.dumps', 'json.loads', 'datetime.now', 'datetime.datetime.now', 'time.time', 'time.monotonic', 'uuid.uuid4',
]);
const NOT_WORK_METHODS = new Set([
  'fetchone', 'fetchall', 'fetchmany', 'scalar', 'format', 'join', 'encode', 'decode', 'get', 'keys', 'values', 'items',
  'append', 'extend', 'pop', 'strip', 'split', 'lower', 'upper', 'startswith', 'endswith', 'replace', 'copy', 'update',
  'debug', 'info', 'warning', 'warn', 'error', 'exception', 'critical', 'log', 'as_string', 'as_bytes',
]);
const NOT_WORK_PREFIXES = ['logging', 'log', 'logger', 'self.log', 'self.logger', 'datetime', 'timedelta', ...NOT_WORK_MODULES];
const NOT_WORK = new RegExp(`^(${NOT_WORK_PREFIXES.map((p) => p.replace(/\./g, '\\.')).join('|')})\\b`);

/** A call that stands for the job's work. */
export function isWork(callee: string | undefined, method: string | undefined): boolean {
  if (method && NOT_WORK_METHODS.has(method)) return false;
  if (!callee) return true;
  if (NOT_WORK_FUNCTIONS.has(callee)) return false;
  if (NOT_WORK.test(callee)) return false;
  return true;
}
