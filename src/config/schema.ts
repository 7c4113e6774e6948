// The JSON schema of pgq-audit.config.json, built from the rules' own option
// schemas so editors complete rule ids and options. `npm run config-schema`
// (node --import tsx src/config/schema.ts) writes schema/pgq-audit.config.schema.json;
// a test fails when the checked-in file is out of date.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ruleMeta as rules } from '../../rules/meta.ts';
import type { JsonSchema } from '../model/index.ts';
import { SEVERITIES } from '../engine/rule-config.ts';
import { packageRoot } from '../package-root.ts';

export const CONFIG_FILE = 'pgq-audit.config.json';
export const PACKAGE_JSON_KEY = 'pgqAudit';
export const SCHEMA_PATH = 'schema/pgq-audit.config.schema.json';

/**
 * Settings shared by every rule that has the option: `settings.tenantSettings`
 * fills each rule's `settings` option, `settings.queueTables` each rule's
 * `queueTables`. A rule's own options win over them.
 */
export const SHARED_RULE_OPTIONS: Readonly<Record<string, string>> = {
  tenantSettings: 'settings',
  queueTables: 'queueTables',
};

export const QUERY_FUNCTIONS_SCHEMA = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Extra call names (in-house wrappers such as "db.run" or "runSql") whose first argument is SQL text, for the TypeScript and Python front ends.',
} as const;

export const CONFIG_KEYS = ['$schema', 'rules', 'settings', 'ignores', 'reportUnusedSuppressions', 'units', 'defaultSchema', 'sql', 'maxFileSize', 'maxAnalysisSteps'] as const;

/** The "sql" key: how .sql files are read. */
export const SQL_SCHEMA = {
  type: 'object',
  description: 'How .sql files are read.',
  properties: {
    dialectDetection: {
      type: 'string',
      enum: ['warn', 'quiet', 'off'],
      description:
        'A .sql file that does not parse and is plainly not PostgreSQL (SQLite, MySQL, T-SQL, Oracle, a Jinja/dbt or Go template) is skipped: "warn" (default) reports it once as a warning, "quiet" skips it silently, "off" parses it as PostgreSQL anyway (parse errors are fatal).',
    },
  },
  additionalProperties: false,
} as const;

/** The schema of a shared setting: the first rule option of that name. */
export function sharedSettingSchema(key: string): JsonSchema | undefined {
  const option = SHARED_RULE_OPTIONS[key];
  for (const rule of rules) {
    const schema = rule.schema.properties?.[option];
    if (schema) return schema;
  }
  return undefined;
}

export function sharedSettingKeys(): string[] {
  return [...Object.keys(SHARED_RULE_OPTIONS).filter((key) => sharedSettingSchema(key)), 'queryFunctions'];
}

export function buildConfigSchema(): Record<string, unknown> {
  const severity = { type: 'string', enum: [...SEVERITIES], description: 'off, warn or error.' };
  const ruleProperties: Record<string, unknown> = {};
  for (const rule of rules) {
    ruleProperties[rule.id] = {
      description: `${rule.description} (default: ${rule.defaultSeverity}).`,
      anyOf: [
        severity,
        {
          type: 'object',
          properties: { severity, options: rule.schema },
          additionalProperties: false,
        },
      ],
    };
  }
  const settings: Record<string, unknown> = {};
  for (const key of Object.keys(SHARED_RULE_OPTIONS)) {
    const schema = sharedSettingSchema(key);
    if (!schema) continue;
    const users = rules.filter((r) => r.schema.properties?.[SHARED_RULE_OPTIONS[key]]).map((r) => r.id);
    settings[key] = { ...schema, description: `${schema.description} Applies to: ${users.join(', ')}; a rule's own "${SHARED_RULE_OPTIONS[key]}" option wins.` };
  }
  settings.queryFunctions = QUERY_FUNCTIONS_SCHEMA;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'pgq-audit configuration',
    description: `${CONFIG_FILE}, or the "${PACKAGE_JSON_KEY}" key of package.json. Generated from the rules: npm run config-schema.`,
    type: 'object',
    properties: {
      $schema: { type: 'string', description: 'The path or URL of this schema, for editors.' },
      rules: {
        type: 'object',
        description: 'Severity and options per rule id (without the pgq/ prefix). Rules left out run at their default severity.',
        properties: ruleProperties,
        additionalProperties: false,
      },
      settings: {
        type: 'object',
        description: 'Settings shared by the rules and the front ends.',
        properties: settings,
        additionalProperties: false,
      },
      ignores: {
        type: 'array',
        items: { type: 'string' },
        description: 'Globs of files not to scan, relative to the folder of this file (e.g. "legacy/**", "**/*.generated.sql").',
      },
      sql: SQL_SCHEMA,
      maxFileSize: {
        type: 'string',
        description:
          'Skip a file larger than this, decided by its size before any parse, so the report is the same on every run (what --max-file-size sets; the option wins): one size for every language ("512KB", "8MB", bytes; "0" for no cap) or sizes per language, "sql=1MB,python=8MB,ts=8MB" (default sql=2MB,python=4MB,ts=4MB).',
      },
      maxAnalysisSteps: {
        type: 'integer',
        minimum: 0,
        description:
          "Skip a file whose analysis takes more than this many steps of work (statements and expressions walked, project calls followed, SQL statements parsed), counted, so the report is the same on every run whatever the machine's load (what --max-analysis-steps sets; the option wins). Default 1000000, some 100 times what the largest real file takes; 0 for no bound.",
      },
      reportUnusedSuppressions: {
        type: 'string',
        enum: [...SEVERITIES],
        description: 'Severity of pgq/unused-suppression: a pgq-audit-ignore-next-line comment that suppresses nothing (default: warn).',
      },
      units: {
        type: 'array',
        description:
          'The project units below this folder: cross-file rules judge each unit on its own facts. A glob of folders ("services/*", "." for this whole folder), or { "path": glob, "each": "file" } for files that are each a unit, with an optional "defaultSchema". The first entry that matches a file wins, at the outermost matching folder; files no entry matches are in the unit of their nearest package.json, pyproject.toml or pgq-audit config.',
        items: {
          anyOf: [
            { type: 'string', minLength: 1 },
            {
              type: 'object',
              properties: {
                path: { type: 'string', minLength: 1, description: 'A glob relative to the folder of this config.' },
                each: { type: 'string', enum: ['folder', 'file'], description: 'folder (default): each matching folder is one unit; file: each matching file is a unit of its own.' },
                defaultSchema: { type: 'string', minLength: 1, description: 'The schema unqualified table names are in, in these units.' },
              },
              required: ['path'],
              additionalProperties: false,
            },
          ],
        },
      },
      defaultSchema: {
        type: 'string',
        minLength: 1,
        description: 'The schema unqualified table names are in (the first schema of the workers\' search_path), for every unit below this folder. Default: public.',
      },
    },
    additionalProperties: false,
  };
}

export function configSchemaText(): string {
  return `${JSON.stringify(buildConfigSchema(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const path = join(packageRoot(), SCHEMA_PATH);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, configSchemaText());
  process.stdout.write(`Wrote ${SCHEMA_PATH}\n`);
}
