// `pgq-audit explain <rule-id>`: prints the rule's doc page, shipped in the
// package: rendered for a terminal, its Markdown as it is anywhere else (a
// pipe, a file), so `pgq-audit explain <id> > page.md` keeps the page.
import { allRuleInfo, docPage, docPagePath } from '../report/rule-docs.ts';
import { UsageError } from '../scan/discover.ts';
import { parseCommandArgs } from './args.ts';
import type { Io } from './io.ts';
import { renderMarkdown } from './terminal-markdown.ts';

export const EXPLAIN_HELP = `Usage: pgq-audit explain <rule-id>

Prints the rule's doc page: what goes wrong, the measured evidence, examples, the fix, options.
On a terminal the page is rendered (wrapped to its width, coloured unless NO_COLOR is set);
piped or redirected, it is the page's Markdown.
`;

export function explainCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseCommandArgs('explain', argv, { help: { type: 'boolean', short: 'h', default: false } });
  if (values.help) {
    io.stdout(EXPLAIN_HELP);
    return 0;
  }
  const ids = allRuleInfo().map((r) => r.id);
  if (positionals.length !== 1) throw new UsageError(`explain takes one rule id, e.g. pgq-audit explain ${ids[0]}. Valid rules: ${ids.join(', ')}`);
  const id = positionals[0].replace(/^pgq\//, '');
  if (!ids.includes(id)) throw new UsageError(`Unknown rule '${positionals[0]}'. Valid rules: ${ids.join(', ')}`);
  const page = docPage(id);
  if (page === undefined) throw new Error(`the doc page of ${id} is missing from the package: ${docPagePath(id)}`);
  if (io.isTTY) {
    // Prose is easiest to read at 100 columns or fewer, however wide the terminal.
    io.stdout(renderMarkdown(page, { width: Math.min(io.columns ?? 80, 100), color: !(io.env ?? {}).NO_COLOR }));
  } else {
    io.stdout(page.endsWith('\n') ? page : `${page}\n`);
  }
  return 0;
}
