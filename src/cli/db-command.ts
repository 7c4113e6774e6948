// `pgq-audit db [url]`: lint a live database's functions, policies, tables
// and role defaults with the same rules, read-only. Exit codes as `scan`:
// 0 clean, 1 errors found, 2 usage, config, connection or catalog error.
import { resolve } from 'node:path';
import { loadConfig, ruleSettings } from '../config/index.ts';
import { countSeverities, type FileResult } from '../engine/findings.ts';
import { parseRuleFlag, type RuleSettings } from '../engine/rule-config.ts';
import { DatabaseError, DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT, lintDatabase } from '../db/index.ts';
import { FORMAT_NAMES, formats } from '../report/index.ts';
import { UsageError } from '../scan/discover.ts';
import { performanceOptions } from '../scan/flags.ts';
import { parseCommandArgs, type OptionsConfig } from './args.ts';
import type { Io } from './io.ts';
import { exitCodeOf, parseMaxWarnings, REPORT_OPTIONS, reportContext, writeReport } from './output.ts';

export const DB_HELP = `Usage: pgq-audit db [url] [options]

Lints a live PostgreSQL database with the same rules as scan: function and procedure
bodies, row level security policies, tables' row level security, and role and
database defaults. Read-only: one READ ONLY transaction with a statement timeout,
rolled back at the end. Without a URL, connects with the PG* environment variables
(PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE).

Options:
  --project <path>           Also scan this repository for facts the database does not hold (its
                             claims make a table a queue); its own findings are scan's to report
  --role <name>              The role the app connects as: report tables it owns whose row level
                             security is not forced, and a role that bypasses row level security
  --schema <glob>            Read only these schemas (repeatable; default: all but the system ones)
  --exclude-schema <glob>    Leave these schemas out (repeatable). pg_catalog, information_schema,
                             pg_toast and objects that belong to an extension are always left out
  --statement-timeout <ms>   Per catalog query (default ${DEFAULT_STATEMENT_TIMEOUT})
  --connect-timeout <ms>     To connect (default ${DEFAULT_CONNECT_TIMEOUT})
  --concurrency <n|auto|off> Worker threads for the routines (default auto; a small catalog runs in this thread)
  --time-budget <ms>         Stop analysing a routine after this long and report it as skipped
                             (default 10000; 0 for no limit)
  -f, --format <name>        Output format: ${FORMAT_NAMES.join(', ')} (default: stylish)
  -o, --output-file <path>   Write the report to a file instead of stdout
  -c, --config <path>        Use this config file instead of the nearest one (from --project, else here)
  --rule <id>:<severity>     Set a rule's severity: off, warn or error (repeatable)
  --max-warnings <n>         Exit 1 when there are more than n warnings
  --quiet                    Report errors only
  --no-code-frame            stylish: no code frame under each finding (frames are drawn only on a terminal)
  -h, --help                 Show this help

Exit codes: 0 no errors, 1 errors found (or too many warnings), 2 usage, config,
connection or catalog error (one line naming the cause and the fix).
`;

const OPTIONS: OptionsConfig = {
  project: { type: 'string' },
  role: { type: 'string' },
  schema: { type: 'string', multiple: true, default: [] },
  'exclude-schema': { type: 'string', multiple: true, default: [] },
  'statement-timeout': { type: 'string' },
  'connect-timeout': { type: 'string' },
  concurrency: { type: 'string' },
  'time-budget': { type: 'string' },
  ...REPORT_OPTIONS,
  help: { type: 'boolean', short: 'h', default: false },
};

function milliseconds(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} ${value}: expected a whole number of milliseconds, at least 1`);
  return n;
}

/** --concurrency and --time-budget, read as scan reads them. */
function speed(values: Record<string, unknown>): { concurrency?: number | 'auto' | 'off'; timeBudget?: number } {
  const { concurrency, timeBudget } = performanceOptions(values);
  return { ...(concurrency !== undefined ? { concurrency } : {}), ...(timeBudget !== undefined ? { timeBudget } : {}) };
}

export async function dbCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandArgs('db', argv, OPTIONS) as { values: Record<string, any>; positionals: string[] };
  if (values.help) {
    io.stdout(DB_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`db takes one connection URL, got ${positionals.length} arguments. To read a repository too: --project <path>`);
  const [url] = positionals;
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(`db: '${url}' is not a postgres:// or postgresql:// URL. Give one, or set the PG* environment variables and give none`);
  }
  const formatName: string = values.format;
  const format = formats[formatName];
  if (!format) throw new UsageError(`--format ${formatName}: valid formats are ${FORMAT_NAMES.join(', ')}`);
  const maxWarnings = parseMaxWarnings(values['max-warnings'] as string | undefined);
  const flags: RuleSettings = {};
  for (const flag of values.rule as string[]) {
    const [id, severity] = parseRuleFlag(flag);
    flags[id] = severity;
  }
  const project: string | undefined = values.project;
  const loaded = loadConfig({ explicit: values.config, start: project !== undefined ? resolve(io.cwd, project) : io.cwd, cwd: io.cwd });
  const { config } = loaded;

  let result;
  try {
    result = await lintDatabase({
      url,
      role: values.role,
      schemas: values.schema,
      excludeSchemas: values['exclude-schema'],
      statementTimeout: milliseconds('statement-timeout', values['statement-timeout'], DEFAULT_STATEMENT_TIMEOUT),
      connectTimeout: milliseconds('connect-timeout', values['connect-timeout'], DEFAULT_CONNECT_TIMEOUT),
      ...speed(values),
      rules: ruleSettings(config, flags),
      queryFunctions: config.settings.queryFunctions,
      reportUnusedSuppressions: config.reportUnusedSuppressions,
      ...(project !== undefined ? { project: resolve(io.cwd, project), projectSelection: { ignores: { base: loaded.base, globs: config.ignores } } } : {}),
      cwd: io.cwd,
    });
  } catch (error) {
    if (error instanceof DatabaseError) {
      io.stderr(`pgq-audit: ${error.message}\n`);
      return 2;
    }
    throw error;
  }

  let results: FileResult[] = result.results;
  if (values.quiet) results = results.map((r) => countSeverities({ ...r, messages: r.messages.filter((m) => m.severity === 2) }));
  writeReport(format(results, reportContext(values, io)), values['output-file'], io);
  const { objects, database } = result.stats;
  if (results.length === 0) {
    io.stderr(`pgq-audit: found no functions, procedures, policies, row level security or setting defaults to read in database ${database} (schemas: ${result.stats.schemas.join(', ') || 'none'}).\n`);
  } else if (objects.otherLanguages > 0 && formatName === 'stylish') {
    io.stderr(`pgq-audit: ${objects.otherLanguages} routine${objects.otherLanguages === 1 ? ' is' : 's are'} in languages other than SQL and PL/pgSQL, and were not read.\n`);
  }

  return exitCodeOf(results, maxWarnings, io);
}
