// `pgq-audit` command line. Exit codes follow ESLint: 0 clean, 1 findings at
// error severity (or more warnings than --max-warnings), 2 usage, config or
// internal error. One file per command.
// Commands are loaded when run: `--version` and `--help` load nothing else.
import { VERSION } from '../version.ts';
import type { Io } from './io.ts';

export type { Io } from './io.ts';

const HELP = `Usage: pgq-audit <command> [options]

Commands:
  scan [paths...]      Scan files and folders (default: .) for multi-tenant worker bugs
  db [url]             Lint a live database's functions, policies and role defaults (read-only)
  rules                List the rules with their severity
  explain <rule-id>    Print a rule's doc page
  help [command]       Show this help, or a command's options (as pgq-audit <command> --help)

Options:
  -h, --help           Show this help
  -v, --version        Show the version

Exit codes: 0 no errors, 1 errors found (or too many warnings), 2 usage, config or internal error.
`;

type Command = (argv: string[], io: Io) => number | Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  scan: async () => (await import('./scan-command.ts')).scanCommand,
  rules: async () => (await import('./rules-command.ts')).rulesCommand,
  explain: async () => (await import('./explain-command.ts')).explainCommand,
  db: async () => (await import('./db-command.ts')).dbCommand,
};

export async function main(argv: string[], io: Io): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '-v' || first === '--version') {
    io.stdout(`${VERSION}\n`);
    return 0;
  }
  if (first === '-h' || first === '--help' || (first === 'help' && (rest.length === 0 || (rest.length === 1 && rest[0] === 'help')))) {
    io.stdout(HELP);
    return 0;
  }
  if (first === undefined) {
    io.stdout(HELP);
    return 2;
  }
  try {
    // `help <command>` is `<command> --help`: one text per command.
    const [name, args] = first === 'help' ? [rest[0], ['--help']] : [first, rest];
    const load = COMMANDS[name];
    if (!load) {
      const hint = name.startsWith('-') && first !== 'help' ? ' (options go after the command: pgq-audit scan --format json .)' : '';
      const { UsageError } = await import('../scan/discover.ts');
      throw new UsageError(`Unknown command '${name}'${hint}. Valid commands: ${[...Object.keys(COMMANDS), 'help'].join(', ')}`);
    }
    if (first === 'help' && rest.length > 1) {
      const { UsageError } = await import('../scan/discover.ts');
      throw new UsageError(`help takes one command, got '${rest.slice(1).join(' ')}' after '${name}'`);
    }
    return await (await load())(args, io);
  } catch (error) {
    const [{ UsageError }, { ConfigError }] = await Promise.all([import('../scan/discover.ts'), import('../engine/rule-config.ts')]);
    if (error instanceof UsageError || error instanceof ConfigError) {
      io.stderr(`pgq-audit: ${error.message}\n`);
      return 2;
    }
    io.stderr(`pgq-audit: internal error: ${(error as Error).stack ?? error}\n`);
    return 2;
  }
}
