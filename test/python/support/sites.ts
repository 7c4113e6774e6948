// A Python worker file parsed from lines, and the SQL site whose text holds a
// needle: what the driver tests (rds-data, aiopg, databases) read.
import assert from 'node:assert/strict';
import type { FileModel, SqlSite } from '../../../src/model/index.ts';
import { pythonFrontEnd } from '../../../src/languages/python/index.ts';

export function parse(lines: string[]): FileModel {
  return pythonFrontEnd.parse(lines.join('\n') + '\n', '/virtual/worker.py', {});
}

export function siteWith(model: FileModel, needle: string): SqlSite {
  const site = model.sites.find((s) => model.text.slice(s.span.start, s.span.end).includes(needle));
  assert.ok(site, `no site with ${needle}: ${model.sites.map((s) => model.text.slice(s.span.start, s.span.end)).join(' | ')}`);
  return site;
}
