// parseArgs per command, with errors that name the option and list the valid ones.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../scan/discover.ts';

export type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

export function parseCommandArgs(command: string, argv: string[], options: OptionsConfig) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const valid = Object.entries(options).map(([name, o]) => (o.short ? `-${o.short}, --${name}` : `--${name}`));
      // Node adds advice about positionals that start with '-': not what a user of a lint CLI needs.
      throw new UsageError(`${message.split('. To specify a positional')[0]}. Valid options for ${command}: ${valid.join(', ')}`);
    }
    throw new UsageError(message);
  }
}
