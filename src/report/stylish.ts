// Grouped by file, one line per finding, a code frame under each when a person
// is reading (stdout is a TTY), and a summary line.
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { styleText } from 'node:util';
import type { FileResult } from '../engine/findings.ts';
import { escapeData } from './github.ts';
import { sourceOf } from './source.ts';

type CodeFrame = typeof import('@babel/code-frame');

/** Loaded for the first frame drawn: CI logs and redirected output have none. */
let codeFrame: CodeFrame | undefined;
const codeFrameColumns: CodeFrame['codeFrameColumns'] = (...args) =>
  (codeFrame ??= createRequire(import.meta.url)('@babel/code-frame') as CodeFrame).codeFrameColumns(...args);

export interface StylishOptions {
  color: boolean;
  codeFrames: boolean;
  cwd: string;
}

/**
 * Text that stays one line of the report and starts no GitHub Actions workflow command: a file may be
 * named `::error ...` or hold a line break, and the runner executes any log line that starts with `::`.
 * Such text is escaped as the github format escapes its data (%0A for a line feed, %3A for the
 * leading colon); control characters (a terminal's escape sequences) too. Other text is left as it is.
 */
export function plainLine(text: string): string {
  if (!/[\x00-\x08\x0a-\x1f\x7f\u0085\u2028\u2029]|^::/.test(text)) return text;
  const escaped = escapeData(text).replace(/[\x00-\x08\x0a-\x1f\x7f\u0085\u2028\u2029]/g, (c) => encodeURIComponent(c));
  return escaped.startsWith('::') ? `%3A${escaped.slice(1)}` : escaped;
}

export function formatStylish(results: readonly FileResult[], options: StylishOptions): string {
  const paint = (style: Parameters<typeof styleText>[0], text: string) => (options.color ? styleText(style, text) : text);
  const out: string[] = [];
  let errors = 0;
  let warnings = 0;
  for (const result of results) {
    if (result.messages.length === 0) continue;
    const name = result.object ? result.object.display : relative(options.cwd, result.filePath) || result.filePath;
    out.push('', paint('underline', plainLine(name)));
    const width = Math.max(...result.messages.map((m) => `${m.line}:${m.column}`.length));
    const source = options.codeFrames ? sourceOf(result) : undefined;
    for (const m of result.messages) {
      if (m.severity === 2) errors++;
      else warnings++;
      const where = `${m.line}:${m.column}`.padEnd(width);
      const severity = m.severity === 2 ? paint('red', 'error') : paint('yellow', 'warning');
      const rule = m.ruleId ? paint('dim', `pgq/${m.ruleId}`) : '';
      out.push(`  ${paint('dim', where)}  ${severity.padEnd(options.color ? 0 : 7)}  ${plainLine(m.message)}  ${rule}`.trimEnd());
      if (source !== undefined && !m.fatal) {
        const frame = codeFrameColumns(
          source,
          { start: { line: m.line, column: m.column }, end: { line: m.endLine, column: m.endColumn } },
          { highlightCode: options.color, linesAbove: 1, linesBelow: 1 },
        );
        out.push(frame.replace(/^/gm, '    '), '');
      }
    }
  }
  const total = errors + warnings;
  if (total === 0) return '';
  const summary = `✖ ${total} problem${total === 1 ? '' : 's'} (${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'})`;
  out.push('', paint(errors > 0 ? 'red' : 'yellow', paint('bold', summary)), '');
  return out.join('\n');
}
