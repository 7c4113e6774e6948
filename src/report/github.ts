// GitHub Actions workflow commands: one annotation per finding, shown on the
// pull request's diff. https://docs.github.com/actions/reference/workflow-commands-for-github-actions
import { relative, sep } from 'node:path';
import type { FileResult } from '../engine/findings.ts';

export interface GithubContext {
  /** The repository root: annotation paths are relative to it. */
  root: string;
}

export function formatGithub(results: readonly FileResult[], context: GithubContext): string {
  const lines: string[] = [];
  for (const result of results) {
    const file = relative(context.root, result.filePath).split(sep).join('/');
    for (const m of result.messages) {
      if (result.object) {
        // A database object is no file of the repository: the annotation goes on the run, and names the object.
        const title = m.ruleId === null ? 'pgq-audit' : `pgq/${m.ruleId}`;
        lines.push(`::${m.severity === 2 ? 'error' : 'warning'} title=${escapeProperty(title)}::${escapeData(`${result.object.display}, line ${m.line}: ${m.message}`)}`);
        continue;
      }
      const properties = {
        file,
        line: m.line,
        col: m.column,
        endLine: m.endLine,
        endColumn: m.endColumn,
        title: m.ruleId === null ? 'pgq-audit' : `pgq/${m.ruleId}`,
      };
      const props = Object.entries(properties)
        .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
        .join(',');
      lines.push(`::${m.severity === 2 ? 'error' : 'warning'} ${props}::${escapeData(m.message)}`);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

// As @actions/core escapes them.
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
