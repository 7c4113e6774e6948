// Validates a config object by hand, so the errors name the key and list the
// valid ones ("unknown rule 'x'. Valid rules: ..."). Rule options are checked
// against each rule's own JSON schema; the generated schema file says the
// same (a test checks that ajv and this agree).
import { ruleMeta as allRules } from '../../rules/meta.ts';
import { ConfigError, SEVERITIES } from '../engine/rule-config.ts';
import type { JsonSchema, Severity } from '../model/index.ts';
import { parseMaxFileSize, type FileSizeCaps } from './file-size.ts';
import { globProblem } from './globs.ts';
import { isJsonObject } from './json.ts';
import { CONFIG_KEYS, QUERY_FUNCTIONS_SCHEMA, SQL_SCHEMA, sharedSettingKeys, sharedSettingSchema } from './schema.ts';

export interface RuleEntry {
  severity?: Severity;
  options?: Record<string, unknown>;
}

/** One entry of `units`: a glob of unit folders (or, with each: 'file', of files that are each a unit). */
export interface UnitEntry {
  path: string;
  each: 'folder' | 'file';
  defaultSchema?: string;
}

/** A config file's content after validation. */
export interface Config {
  rules: Record<string, RuleEntry>;
  settings: { tenantSettings?: string[]; queueTables?: string[]; queryFunctions?: string[] };
  ignores: string[];
  reportUnusedSuppressions?: Severity;
  /** The project units below this config's folder (src/config/units.ts); unset: found by their package.json / pyproject.toml. */
  units?: UnitEntry[];
  /** The schema unqualified table names are in, for the units of this config (default public). */
  defaultSchema?: string;
  sql?: { dialectDetection?: 'warn' | 'quiet' | 'off' };
  /** Bytes above which a file is skipped, per language (the "maxFileSize" text, read as --max-file-size). */
  maxFileSize?: FileSizeCaps;
  /** Steps of work above which a file's analysis is stopped and the file skipped (src/work.ts; 0: no bound). */
  maxAnalysisSteps?: number;
}

/** `source` names the file in messages, e.g. "pgq-audit.config.json" or "package.json#pgqAudit". */
export function validateConfig(raw: unknown, source: string): Config {
  const fail = (where: string, message: string): never => {
    throw new ConfigError(`${source}: ${where ? `${where}: ` : ''}${message}`);
  };
  if (!isJsonObject(raw)) fail('', `expected an object, got ${kind(raw)}`);
  const input = raw as Record<string, unknown>;
  unknownKeys(input, CONFIG_KEYS, 'key', '', fail);
  const config: Config = { rules: {}, settings: {}, ignores: [] };

  if (input.rules !== undefined) {
    if (!isJsonObject(input.rules)) fail('rules', `expected an object of rule ids, got ${kind(input.rules)}`);
    for (const [key, value] of Object.entries(input.rules as Record<string, unknown>)) {
      const id = key;
      const rule = allRules.find((r) => r.id === id);
      if (!rule && allRules.some((r) => `pgq/${r.id}` === key)) fail('rules', `unknown rule '${key}': write rule ids without the pgq/ prefix ('${key.slice(4)}')`);
      if (!rule) fail('rules', `unknown rule '${key}'. Valid rules: ${allRules.map((r) => r.id).join(', ')}`);
      const where = `rules.${key}`;
      if (typeof value === 'string') {
        config.rules[id] = { severity: checkSeverity(value, where, fail) };
        continue;
      }
      if (!isJsonObject(value)) fail(where, `expected a severity (${SEVERITIES.join(', ')}) or { "severity": ..., "options": {...} }, got ${kind(value)}`);
      const entry = value as Record<string, unknown>;
      unknownKeys(entry, ['severity', 'options'], 'key', where, fail);
      const result: RuleEntry = {};
      if (entry.severity !== undefined) result.severity = checkSeverity(entry.severity, `${where}.severity`, fail);
      if (entry.options !== undefined) {
        checkValue(entry.options, rule!.schema, `${where}.options`, fail);
        result.options = entry.options as Record<string, unknown>;
      }
      config.rules[id] = result;
    }
  }

  if (input.settings !== undefined) {
    if (!isJsonObject(input.settings)) fail('settings', `expected an object, got ${kind(input.settings)}`);
    const settings = input.settings as Record<string, unknown>;
    unknownKeys(settings, sharedSettingKeys(), 'setting', 'settings', fail);
    for (const [key, value] of Object.entries(settings)) {
      const schema = key === 'queryFunctions' ? (QUERY_FUNCTIONS_SCHEMA as JsonSchema) : sharedSettingSchema(key)!;
      checkValue(value, schema, `settings.${key}`, fail);
      (config.settings as Record<string, unknown>)[key] = value;
    }
  }

  if (input.ignores !== undefined) {
    checkValue(input.ignores, { type: 'array', items: { type: 'string' } }, 'ignores', fail);
    config.ignores = input.ignores as string[];
    config.ignores.forEach((glob, i) => {
      const problem = globProblem(glob);
      if (problem) fail(`ignores[${i}]`, problem);
    });
  }
  if (input.sql !== undefined) {
    checkValue(input.sql, SQL_SCHEMA as unknown as JsonSchema, 'sql', fail);
    config.sql = input.sql as Config['sql'];
  }
  if (input.maxFileSize !== undefined) {
    if (typeof input.maxFileSize !== 'string') fail('maxFileSize', `expected a string such as "8MB" or "sql=1MB,ts=8MB", got ${kind(input.maxFileSize)}`);
    config.maxFileSize = parseMaxFileSize(input.maxFileSize as string, 'maxFileSize', (message) => new ConfigError(`${source}: ${message}`));
  }
  if (input.maxAnalysisSteps !== undefined) {
    if (!Number.isSafeInteger(input.maxAnalysisSteps) || (input.maxAnalysisSteps as number) < 0) fail('maxAnalysisSteps', `expected a whole number of steps (0 for no bound), got ${JSON.stringify(input.maxAnalysisSteps)}`);
    config.maxAnalysisSteps = input.maxAnalysisSteps as number;
  }
  if (input.reportUnusedSuppressions !== undefined) {
    config.reportUnusedSuppressions = checkSeverity(input.reportUnusedSuppressions, 'reportUnusedSuppressions', fail);
  }
  if (input.defaultSchema !== undefined) config.defaultSchema = checkSchemaName(input.defaultSchema, 'defaultSchema', fail);
  if (input.units !== undefined) {
    if (!Array.isArray(input.units)) fail('units', `expected an array of globs or { "path": ..., "each": ..., "defaultSchema": ... }, got ${kind(input.units)}`);
    config.units = (input.units as unknown[]).map((entry, i) => unitEntry(entry, `units[${i}]`, fail));
  }
  return config;
}

function unitEntry(entry: unknown, where: string, fail: Fail): UnitEntry {
  if (typeof entry === 'string') return { path: checkGlob(entry, where, fail), each: 'folder' };
  if (!isJsonObject(entry)) fail(where, `expected a glob or { "path": ..., "each": ..., "defaultSchema": ... }, got ${kind(entry)}`);
  const object = entry as Record<string, unknown>;
  unknownKeys(object, ['path', 'each', 'defaultSchema'], 'key', where, fail);
  if (object.path === undefined) fail(where, 'needs a "path": a glob relative to the folder of this config');
  const result: UnitEntry = { path: checkGlob(object.path, `${where}.path`, fail), each: 'folder' };
  if (object.each !== undefined) {
    if (object.each !== 'folder' && object.each !== 'file') fail(`${where}.each`, `${JSON.stringify(object.each)} is not allowed. Valid values: "folder", "file"`);
    result.each = object.each as 'folder' | 'file';
  }
  if (object.defaultSchema !== undefined) result.defaultSchema = checkSchemaName(object.defaultSchema, `${where}.defaultSchema`, fail);
  return result;
}

function checkGlob(value: unknown, where: string, fail: Fail): string {
  if (typeof value !== 'string' || value.trim() === '') fail(where, `expected a non-empty glob, got ${kind(value)}`);
  const glob = value as string;
  if (glob.startsWith('/') || /^[A-Za-z]:[\\/]/.test(glob) || glob.split('/').includes('..')) {
    fail(where, `'${glob}': a unit glob is relative to the folder of this config and stays below it`);
  }
  const problem = globProblem(glob);
  if (problem) fail(where, problem);
  return glob;
}

function checkSchemaName(value: unknown, where: string, fail: Fail): string {
  if (typeof value !== 'string' || value === '') fail(where, `expected a schema name, got ${kind(value)}`);
  return value as string;
}

type Fail = (where: string, message: string) => never;

function checkSeverity(value: unknown, where: string, fail: Fail): Severity {
  if (typeof value !== 'string' || !SEVERITIES.includes(value as Severity)) {
    fail(where, `${JSON.stringify(value)} is not a severity. Valid severities: ${SEVERITIES.join(', ')}`);
  }
  return value as Severity;
}

function unknownKeys(object: Record<string, unknown>, valid: readonly string[], noun: string, where: string, fail: Fail): void {
  for (const key of Object.keys(object)) {
    if (!valid.includes(key)) fail(where, `unknown ${noun} '${key}'. Valid ${noun}s: ${valid.join(', ')}`);
  }
}

/** The subset of JSON schema the rules' option schemas use. */
export function checkValue(value: unknown, schema: JsonSchema, where: string, fail: Fail): void {
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => hasType(value, t))) fail(where, `expected ${types.map(describeType(schema)).join(' or ')}, got ${kind(value)}`);
  }
  if (schema.enum && !schema.enum.some((v) => v === value)) {
    fail(where, `${JSON.stringify(value)} is not allowed. Valid values: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) fail(where, `must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) fail(where, `must be at most ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, i) => checkValue(item, schema.items!, `${where}[${i}]`, fail));
  if (isJsonObject(value)) {
    const properties = schema.properties ?? {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      // Own properties only: 'constructor', 'toString' or '__proto__' is no option because every object inherits one.
      if (Object.hasOwn(properties, key)) {
        checkValue(item, properties[key], `${where}.${key}`, fail);
        continue;
      }
      if (schema.additionalProperties === false) {
        const valid = Object.keys(properties);
        fail(where, `unknown option '${key}'. ${valid.length ? `Valid options: ${valid.join(', ')}` : 'This rule has no options'}`);
      }
    }
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isJsonObject(value);
    case 'integer':
      return Number.isInteger(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

const describeType = (schema: JsonSchema) => (type: string) =>
  type === 'array' && schema.items?.type === 'string' ? 'an array of strings' : type === 'array' || type === 'object' || type === 'integer' ? `an ${type}` : `a ${type}`;

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}
