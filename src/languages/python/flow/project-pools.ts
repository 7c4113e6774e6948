// The pools a project makes, read across its modules: what a connection or
// pool handed in as an annotated parameter (`session: AsyncSession`) can
// come from when the file itself makes none. When every pool the project's
// own modules make with a driver's makers agrees — all of them NullPool,
// closed at checkin — a handed-in one of that driver is such a pool too.
// Anything else (none found, one shared, a maker whose options cannot be
// read, a pool the driver says comes from elsewhere, too many modules) stays
// unknown.
//
// The project is the folder the file's own package is imported from
// (project.ts importRoot), without its tests and migrations: a test's or a
// migration's engine is not the one the application hands out.
import type { ConnectionConfig, Driver } from '../../../model/index.ts';
import { decodeText, readRegularFile } from '../../../read-file.ts';
import { DRIVERS, makerOf, readConfig } from '../drivers/index.ts';
import { parsePython } from '../syntax.ts';
import { moduleConstants, qualifiedName, readImports } from './imports.ts';
import type { ReadContext } from './types.ts';
import { PerScanMap } from '../../../scan-generation.ts';
import { projectFiles } from './project-files.ts';

const MAX_BYTES = 512 * 1024;

export interface ProjectPools {
  /** The project's folder. */
  root: string;
  /** Per driver: the configs of every pool its makers make in the project; null when one is made the reader cannot follow. */
  byDriver: Map<Driver, { configs: ConnectionConfig[]; files: string[] } | null>;
  /** Every file read: any of them can add or change a maker, so an answer from this reading depends on them all. */
  files: string[];
}

/** Per scan: another scan in this process may find the project changed. */
const cache = new PerScanMap<string, ProjectPools | null>();

export function clearProjectPools(): void {
  cache.clear();
}

/** What the project under `root` makes with each driver's makers (read once per scan). */
export function projectPools(root: string): ProjectPools | undefined {
  const known = cache.get(root);
  if (known !== undefined) return known ?? undefined;
  const files = projectFiles(root);
  const result: ProjectPools | null = files ? { root, byDriver: new Map(), files } : null;
  cache.set(root, result);
  if (!result || !files) return undefined;
  for (const path of files) {
    let text: string;
    try {
      text = decodeText(readRegularFile(path, MAX_BYTES));
    } catch {
      continue;
    }
    readMakers(path, text, result);
  }
  return result;
}

function readMakers(path: string, text: string, result: ProjectPools): void {
  const mentioned: Driver[] = [];
  for (const [driver, hint] of hints()) {
    // Pools the driver's users also get from code that is no maker of it (a framework's extension).
    if (hint.elsewhere?.test(text)) result.byDriver.set(driver, null);
    else if (hint.mentions.test(text)) mentioned.push(driver);
  }
  if (mentioned.length === 0) return;
  const parsed = parsePython(text);
  if (!parsed.ok) return;
  const imports = readImports(parsed.tree, parsed.text);
  const constants = moduleConstants(parsed.tree, parsed.text);
  const ctx: ReadContext = {
    text: parsed.text,
    valueOf: (n) => constants.get(parsed.text.slice(n.from, n.to)),
    qualify: (n) => qualifiedName(n, parsed.text, imports),
    classSetsThreshold: () => false,
  };
  parsed.tree.iterate({
    enter(ref) {
      if (ref.name !== 'CallExpression') return;
      const callee = ref.node.firstChild;
      const maker = callee ? makerOf(ctx.qualify(callee)) : undefined;
      if (!maker || maker.kind !== 'pool' || !mentioned.includes(maker.driver)) return;
      const seen = result.byDriver.get(maker.driver);
      if (seen === null) return;
      const entry = readConfig(ref.node, maker, ctx);
      const list = seen ?? { configs: [], files: [] };
      list.configs.push(entry.config);
      if (!list.files.includes(path)) list.files.push(path);
      result.byDriver.set(maker.driver, list);
    },
  });
}

function hints(): [Driver, { mentions: RegExp; elsewhere?: RegExp }][] {
  return DRIVERS.flatMap((d) => (d.projectPools ? [[d.name, d.projectPools] as [Driver, { mentions: RegExp; elsewhere?: RegExp }]] : []));
}

/**
 * The config standing for a pool of `driver` handed in to a function of a
 * project under `root`, when every pool the project makes with it is
 * closed at checkin (NullPool); no config otherwise. `files` are the project
 * files the answer rests on, whichever it is: a cached analysis holds only
 * while none of them changes (an edit elsewhere can add a pooled maker).
 */
export function handedInPoolConfig(root: string, driver: Driver, id: string, at: { start: number; end: number }): { config?: ConnectionConfig; files: string[] } {
  const project = projectPools(root);
  const files = project?.files ?? [];
  const found = project?.byDriver.get(driver);
  if (!found || found.configs.length === 0 || !found.configs.every((c) => c.reuse === 'no-reuse')) return { files };
  const config: ConnectionConfig = {
    id,
    driver,
    kind: 'pool',
    span: { ...at },
    preparedStatements: 'unknown',
    autocommit: 'unknown',
    callbacks: [],
    reuse: 'no-reuse',
    ...(found.files.length === 1 ? { definedIn: found.files[0] } : {}),
  };
  return { config, files };
}
