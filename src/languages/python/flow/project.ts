// Other modules of the same Python project, read from disk when a file
// imports a name from them (`from app.db import pool`, `from .database
// import SessionLocal, engine`, `from .models import Job`): most apps make
// their pool, engine or models in one module and use them everywhere.
//
// Bounded: only modules inside the project unit (the nearest folder with a
// pyproject.toml, setup.cfg, setup.py or manage.py, else the repository
// root), at most MAX_MODULES per file, each parsed once per process (keyed
// by path and mtime). What cannot be found stays unknown.
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { decodeText, readRegularFile } from '../../../read-file.ts';
import type { Tree } from '@lezer/common';
import { moduleConstants, readImports, type Imports } from './imports.ts';
import { argsOf, children, parsePython, type Node } from '../syntax.ts';
import { clearRoots, inside, projectRoot, resolveModule, UNIT_MARKERS } from './module-paths.ts';
import { regularFileStat } from '../../typescript/flow/modules.ts';

export { projectRoot, resolveModule };

export interface ModuleSource {
  path: string;
  text: string;
  tree: Tree;
  imports: Imports;
  constants: Map<string, Node>;
}

export const MAX_MODULES = 24;
/** Source files larger than this are not read for bindings. */
const MAX_BYTES = 512 * 1024;

const modules = new Map<string, { mtime: number; source: ModuleSource | null }>();

/**
 * The folder a file's own package is imported from: above its nearest
 * ancestor folder named as the first part of one of its absolute imports
 * (`from app.core.db.names import x` in <base>/app/core/db/tenancy/schema.py:
 * <base>), kept inside its project unit when that has a marker. Else the
 * project unit when it has one; undefined when neither is known.
 */
export function importRoot(file: string, modules: ReadonlySet<string>): string | undefined {
  const root = projectRoot(file);
  const marked = root !== dirname(file) || UNIT_MARKERS.some((m) => existsSync(join(root, m))) || existsSync(join(root, '.git'));
  let dir = dirname(file);
  for (let depth = 0; depth < 16 && dirname(dir) !== dir; depth++, dir = dirname(dir)) {
    if (!modules.has(basename(dir))) continue;
    const base = dirname(dir);
    if (!marked || base === root || inside(root, base)) return base;
    break;
  }
  return marked ? root : undefined;
}

/**
 * Parses a module of the project once per process (per mtime); null when it is unreadable, too large or
 * not Python 3. Stat'ed once per scan (modules.ts's beginScan), not each time a file imports it.
 */
export function readModule(path: string): ModuleSource | null {
  const stat = regularFileStat(path);
  if (!stat || stat.size > MAX_BYTES) return null;
  const mtime = stat.mtimeMs;
  const cached = modules.get(path);
  if (cached && cached.mtime === mtime) return cached.source;
  let source: ModuleSource | null = null;
  try {
    const parsed = parsePython(decodeText(readRegularFile(path, MAX_BYTES)));
    if (parsed.ok) source = { path, text: parsed.text, tree: parsed.tree, imports: readImports(parsed.tree, parsed.text), constants: moduleConstants(parsed.tree, parsed.text) };
  } catch {
    source = null;
  }
  modules.set(path, { mtime, source });
  return source;
}

/** Forgets what was read (tests that rewrite files). */
export function clearProjectCache(): void {
  clearRoots();
  modules.clear();
}

/**
 * What a module binds a top-level name to: `NAME = value` once, or — the
 * asyncpg idiom — `NAME = None` at the top and `global NAME; NAME = await
 * create_pool(...)` in one startup function.
 */
export function moduleValue(source: ModuleSource, name: string): Node | undefined {
  const constant = source.constants.get(name);
  if (constant) return constant;
  // A module is read once per process and asked the same names by every file that imports it.
  let known = globalValues.get(source);
  if (!known) globalValues.set(source, (known = new Map()));
  if (known.has(name)) return known.get(name);
  const value = globalValue(source, name);
  known.set(name, value);
  return value;
}

const globalValues = new WeakMap<ModuleSource, Map<string, Node | undefined>>();

function globalValue(source: ModuleSource, name: string): Node | undefined {
  let found: Node | undefined;
  let count = 0;
  source.tree.iterate({
    enter(ref) {
      if (ref.name !== 'FunctionDefinition') return;
      const body = source.text.slice(ref.from, ref.to);
      if (!new RegExp(`\\bglobal\\s+[\\w\\s,]*\\b${name}\\b`).test(body)) return false;
      ref.node.cursor().iterate((inner) => {
        if (inner.name !== 'AssignStatement') return;
        const target = inner.node.firstChild;
        if (!target || source.text.slice(target.from, target.to) !== name) return;
        count++;
        found = inner.node.lastChild ?? undefined;
      });
      return false;
    },
  });
  return count === 1 ? found : undefined;
}

/** The call a module function returns, when its body has one return and it returns a call (`return create_engine(...)`). */
export function returnedCall(def: Node): Node | undefined {
  const returns: Node[] = [];
  const visit = (node: Node) => {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.name === 'FunctionDefinition' || c.name === 'LambdaExpression' || c.name === 'ClassDefinition') continue;
      if (c.name === 'ReturnStatement') returns.push(c);
      else visit(c);
    }
  };
  const body = def.getChild('Body');
  if (body) visit(body);
  if (returns.length !== 1) return undefined;
  const value = returns[0].lastChild;
  return value?.name === 'CallExpression' ? value : undefined;
}

/** The top-level def of a module by its name. */
export function moduleDef(source: ModuleSource, name: string): Node | undefined {
  for (let c = source.tree.topNode.firstChild; c; c = c.nextSibling) {
    const def = c.name === 'DecoratedStatement' ? c.getChild('FunctionDefinition') : c;
    if (def?.name !== 'FunctionDefinition') continue;
    const id = def.getChild('VariableName');
    if (id && source.text.slice(id.from, id.to) === name) return def;
  }
  return undefined;
}

/**
 * A class's own function of a top-level class of a module, called on the class (`Job.take()`): a method
 * decorated `@classmethod` or `@staticmethod` in its body, or in a base class of the module it names
 * (`class Job(BaseJob)`), at most MAX_BASES classes up.
 */
export function classFunction(source: ModuleSource, className: string, name: string, depth = 0): Node | undefined {
  for (let c = source.tree.topNode.firstChild; c; c = c.nextSibling) {
    const def = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    const id = def?.name === 'ClassDefinition' ? def.getChild('VariableName') : null;
    if (!def || !id || source.text.slice(id.from, id.to) !== className) continue;
    for (let m = def.getChild('Body')?.firstChild; m; m = m.nextSibling) {
      const method = m.name === 'DecoratedStatement' ? m.getChild('FunctionDefinition') : m.name === 'FunctionDefinition' ? m : null;
      const methodId = method?.getChild('VariableName');
      if (!method || !methodId || source.text.slice(methodId.from, methodId.to) !== name) continue;
      const onClass = m.getChildren('Decorator').some((d) => /^@\s*(?:classmethod|staticmethod)\s*$/.test(source.text.slice(d.from, d.to).trim()));
      return onClass ? method : undefined;
    }
    if (depth >= MAX_BASES) return undefined;
    for (const base of argsOf(def.getChild('ArgList'), source.text)) {
      if (base.name || base.value.name !== 'VariableName') continue;
      const found = classFunction(source, source.text.slice(base.value.from, base.value.to), name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  return undefined;
}

/** How many base classes of a module classFunction follows up. */
const MAX_BASES = 3;

/**
 * A constant of a top-level class of a module (`class Q:` then `CLAIM = "..."` in its body): the value of
 * the attribute assigned once there, by a plain `NAME = value`.
 */
export function classConstant(source: ModuleSource, className: string, attribute: string): Node | undefined {
  for (let c = source.tree.topNode.firstChild; c; c = c.nextSibling) {
    const def = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    const id = def?.name === 'ClassDefinition' ? def.getChild('VariableName') : null;
    if (!def || !id || source.text.slice(id.from, id.to) !== className) continue;
    const values: Node[] = [];
    for (let s = def.getChild('Body')?.firstChild; s; s = s.nextSibling) {
      if (s.name !== 'AssignStatement') continue;
      const parts = children(s);
      if (parts[0]?.name === 'VariableName' && source.text.slice(parts[0].from, parts[0].to) === attribute) {
        if (parts.length !== 3 || parts[1].name !== 'AssignOp') return undefined;
        values.push(parts[2]);
      }
    }
    return values.length === 1 ? values[0] : undefined;
  }
  return undefined;
}
