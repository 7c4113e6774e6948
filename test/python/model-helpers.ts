// What the Python model tests share: a file's model from its lines, and the
// site whose host text holds a needle (failing with every site's text).
import assert from 'node:assert/strict';
import type { FileModel, SqlSite } from '../../src/model/index.ts';
import { pythonFrontEnd } from '../../src/languages/python/index.ts';

/** The model of a Python file written as lines (a virtual path unless one is given). */
export function parseLines(lines: string[], file = '/virtual/worker.py'): FileModel {
  return pythonFrontEnd.parse(lines.join('\n') + '\n', file, {});
}

/** The site whose host text (at its span) contains `needle`. */
export function siteWith(model: FileModel, needle: string): SqlSite {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(needle));
  assert.ok(site, `no site with ${needle}: ${model.sites.map((s) => model.text.slice(s.span.start, s.span.end)).join(' | ')}`);
  return site;
}
