// `pgq-audit` command line. Exit codes follow ESLint: 0 clean, 1 findings at
// error severity (or more warnings than --max-warnings), 2 usage or internal error.
import { parseArgs } from 'node:util';
import { ConfigError, parseRuleFlag, type RuleSettings } from '../engine/rule-config.ts';
import { FORMAT_NAMES, formats } from '../report/index.ts';
import { UsageError } from '../scan/discover.ts';
import { scan } from '../scan/scan.ts';
import { VERSION } from '../version.ts';

const HELP = `Usage: pgq-audit <command> [options]

Commands:
  scan [paths...]          Scan files and folders (default: .) for multi-tenant worker bugs

Options for scan:
  -f, --format <name>      Output format: ${FORMAT_NAMES.join(', ')} (default: stylish)
  --rule <id>:<severity>   Set a rule's severity: off, warn or error (repeatable)
  --max-warnings <n>       Exit 1 when there are more than n warnings
  --quiet                  Report errors only
  -h, --help               Show this help
  -v, --version            Show the version

Exit codes: 0 no errors, 1 errors found (or too many warnings), 2 usage or internal error.
`;

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  isTTY: boolean;
  cwd: string;
}

export async function main(argv: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        format: { type: 'string', short: 'f', default: 'stylish' },
        rule: { type: 'string', multiple: true, default: [] },
        'max-warnings': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (error) {
    io.stderr(`pgq-audit: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  const [command, ...paths] = positionals;
  if (values.help || command === undefined) {
    io.stdout(HELP);
    return values.help ? 0 : 2;
  }
  try {
    if (command === 'scan') return await runScan(paths, values, io);
    throw new UsageError(`Unknown command '${command}'. Valid commands: scan`);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      io.stderr(`pgq-audit: ${error.message}\n`);
      return 2;
    }
    io.stderr(`pgq-audit: internal error: ${(error as Error).stack ?? error}\n`);
    return 2;
  }
}

async function runScan(paths: string[], values: Record<string, any>, io: Io): Promise<number> {
  const format = formats[values.format];
  if (!format) throw new UsageError(`--format ${values.format}: valid formats are ${FORMAT_NAMES.join(', ')}`);
  let maxWarnings = -1;
  if (values['max-warnings'] !== undefined) {
    maxWarnings = Number(values['max-warnings']);
    if (!Number.isInteger(maxWarnings) || maxWarnings < -1) throw new UsageError(`--max-warnings ${values['max-warnings']}: expected a whole number (-1 for no limit)`);
  }
  const rules: RuleSettings = {};
  for (const flag of values.rule as string[]) {
    const [id, severity] = parseRuleFlag(flag);
    rules[id] = severity;
  }
  const result = await scan({ paths: paths.length ? paths : ['.'], cwd: io.cwd, rules });
  let results = result.results;
  if (values.quiet) {
    results = results.map((r) => ({ ...r, messages: r.messages.filter((m) => m.severity === 2), warningCount: 0 }));
  }
  const output = format(results, { cwd: io.cwd, color: io.isTTY && !process.env.NO_COLOR, codeFrames: io.isTTY });
  if (output) io.stdout(output.endsWith('\n') ? output : `${output}\n`);
  const warnings = results.reduce((n, r) => n + r.warningCount, 0);
  if (result.errorCount > 0) return 1;
  if (maxWarnings >= 0 && warnings > maxWarnings) {
    io.stderr(`pgq-audit found too many warnings (maximum: ${maxWarnings}).\n`);
    return 1;
  }
  return 0;
}
