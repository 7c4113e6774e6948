// Which calls inside a transaction are the job's work: code of the job that
// may fail and throw, as opposed to logging, pure globals and collection
// methods that run no code of the job.
import { dottedName, propertyName, unwrap, type Call } from '../syntax.ts';

/** Calls that are not the job's work: they run no code of the job. */
const PURE_GLOBALS = new Set(['console', 'JSON', 'Math', 'Number', 'String', 'Boolean', 'Date', 'Object', 'Array', 'Promise', 'Symbol', 'BigInt', 'Buffer', 'parseInt', 'parseFloat', 'isNaN', 'structuredClone', 'Error', 'TypeError', 'RangeError', 'assert', 'Reflect', 'Intl', 'URL', 'crypto', 'randomUUID', 'process']);
const PURE_METHODS = new Set([
  'map', 'filter', 'forEach', 'reduce', 'find', 'findIndex', 'some', 'every', 'includes', 'indexOf', 'push', 'pop', 'shift', 'unshift', 'slice', 'splice', 'join', 'split',
  'toString', 'toJSON', 'toISOString', 'trim', 'at', 'keys', 'values', 'entries', 'get', 'set', 'has', 'add', 'delete', 'concat', 'flat', 'flatMap', 'sort', 'reverse',
  'startsWith', 'endsWith', 'replace', 'replaceAll', 'toLowerCase', 'toUpperCase', 'padStart', 'padEnd', 'getTime', 'valueOf', 'then', 'catch', 'finally',
  'log', 'info', 'debug', 'warn', 'error', 'trace', 'fatal', 'child', 'release', 'end', 'connect', 'commit', 'rollback', 'emit', 'on', 'once', 'off',
]);
const LOGGER_NAMES = /^(console|log|logger|this\.log|this\.logger|pino|winston|debug)$/;

/** A call that runs code of the job (its work), not a pure global, a logger or a collection method; `queryFunctions` send SQL. */
export function isWorkCall(call: Call, queryFunctions: readonly string[]): boolean {
  const callee = unwrap(call.callee);
  if (!callee) return false;
  if (callee.type === 'Identifier') return !PURE_GLOBALS.has(callee.name) && !queryFunctions.includes(callee.name);
  if (callee.type === 'MemberExpression') {
    const name = propertyName(callee);
    const root = dottedName(callee.object);
    if (root && (LOGGER_NAMES.test(root) || PURE_GLOBALS.has(root.split('.')[0]))) return false;
    if (name && PURE_METHODS.has(name)) return false;
    return true;
  }
  return true;
}
