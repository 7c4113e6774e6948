// `pgq-audit rules`: every rule with the severity a scan from here runs it at
// (defaults, then the config found from the current folder or --config).
import { loadConfig, ruleSettings } from '../config/index.ts';
import type { RuleSetting } from '../engine/rule-config.ts';
import { allRuleInfo, docsUrl } from '../report/rule-docs.ts';
import { invalidSuppression, unusedSuppression } from '../suppressions/index.ts';
import { UsageError } from '../scan/discover.ts';
import { parseCommandArgs } from './args.ts';
import type { Io } from './io.ts';

export const RULES_HELP = `Usage: pgq-audit rules [options]

Lists the rules with the severity a scan from this folder runs them at, and one line each;
then the meta rules, which check pgq-audit's own suppression comments.

Options:
  -c, --config <path>   Read severities from this config file instead of the nearest one
  -f, --format <name>   text (default) or json
  -h, --help            Show this help
`;

export function rulesCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseCommandArgs('rules', argv, {
    config: { type: 'string', short: 'c' },
    format: { type: 'string', short: 'f', default: 'text' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (values.help) {
    io.stdout(RULES_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`rules takes no arguments, got '${positionals[0]}'. To read one rule's page: pgq-audit explain <rule-id>`);
  if (values.format !== 'text' && values.format !== 'json') throw new UsageError(`--format ${values.format}: valid formats for rules are text, json`);
  const loaded = loadConfig({ explicit: values.config as string | undefined, start: io.cwd, cwd: io.cwd });
  const settings = ruleSettings(loaded.config);
  const rows = allRuleInfo().map((info) => {
    let severity: string = (settings[info.id] as RuleSetting | undefined)?.severity ?? info.defaultSeverity;
    if (info.id === unusedSuppression.id) severity = loaded.config.reportUnusedSuppressions ?? info.defaultSeverity;
    if (info.id === invalidSuppression.id) severity = 'error';
    return { id: `pgq/${info.id}`, severity, defaultSeverity: info.defaultSeverity, description: info.description, builtIn: info.builtIn, docs: docsUrl(info.id) };
  });
  if (values.format === 'json') {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...rows.map((r) => r.id.length));
  const line = (r: (typeof rows)[number]) => `${r.id.padEnd(width)}  ${r.severity.padEnd(5)}  ${r.description}`;
  const checks = rows.filter((r) => !r.builtIn);
  const meta = rows.filter((r) => r.builtIn);
  const source = loaded.file ? `defaults and ${loaded.file}` : 'defaults (no config file found)';
  io.stdout(
    `${checks.map(line).join('\n')}\n\n` +
      "Meta rules (built in: they check pgq-audit's own suppression comments, not the code):\n" +
      `${meta.map(line).join('\n')}\n\n` +
      `${checks.length} rules (the README's table) and ${meta.length} meta rules. Severities: ${source}. Read a rule's page: pgq-audit explain <rule-id>\n`,
  );
  return 0;
}
