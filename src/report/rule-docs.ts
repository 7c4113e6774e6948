// What reporters and the CLI say about a rule: its metadata, its doc page
// (docs/rules/<id>.md, shipped in the package) and the page's URL.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ruleMeta as rules } from '../../rules/meta.ts';
import type { Severity } from '../model/index.ts';
import { packageRoot } from '../package-root.ts';
import { metaRules } from '../suppressions/index.ts';
import { VERSION } from '../version.ts';

export interface RuleInfo {
  id: string;
  description: string;
  defaultSeverity: Exclude<Severity, 'off'>;
  /** Built into the engine (suppression diagnostics), not a rule of rules/. */
  builtIn: boolean;
}

export function allRuleInfo(): RuleInfo[] {
  return [
    ...rules.map((r) => ({ id: r.id, description: r.description, defaultSeverity: r.defaultSeverity, builtIn: false })),
    ...metaRules.map((r) => ({ id: r.id, description: r.description, defaultSeverity: r.defaultSeverity, builtIn: true })),
  ];
}

const packageJson = () => JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { homepage?: string; repository?: string | { url?: string } };

/** The GitHub repository of the package, if package.json names one. */
function repositoryUrl(): string | undefined {
  const repository = packageJson().repository;
  const url = typeof repository === 'string' ? repository : repository?.url;
  const match = url && /github\.com[/:]([^/]+\/[^/.#]+)/.exec(url);
  return match ? `https://github.com/${match[1]}` : undefined;
}

export function informationUri(): string {
  return packageJson().homepage ?? repositoryUrl() ?? 'https://www.npmjs.com/package/pgq-audit';
}

/** The doc page of this version: on GitHub when package.json names the repository, else in the published package. */
export function docsUrl(id: string): string {
  const repository = repositoryUrl();
  return repository ? `${repository}/blob/v${VERSION}/docs/rules/${id}.md` : `https://unpkg.com/pgq-audit@${VERSION}/docs/rules/${id}.md`;
}

export function docPagePath(id: string): string {
  return join(packageRoot(), 'docs', 'rules', `${id}.md`);
}

export function docPage(id: string): string | undefined {
  const path = docPagePath(id);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** The first paragraph under "## What goes wrong", unwrapped; the description when there is none. */
export function fullDescription(info: RuleInfo, page = docPage(info.id)): string {
  const section = page?.split(/^## What goes wrong\n/m)[1];
  const paragraph = section?.trim().split(/\n\s*\n/)[0];
  return paragraph && !paragraph.startsWith('#') ? paragraph.replace(/\s*\n\s*/g, ' ') : `${info.description}.`;
}
