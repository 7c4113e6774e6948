// Which table an ORM model stands for: SQLAlchemy's __tablename__ (or a
// Core `Table("jobs", ...)`), SQLModel's lower-cased class name, Django's
// Meta.db_table or its default `<app_label>_<model name>` — read from the
// class in this file or in the project module it is imported from.
import { basename, dirname } from 'node:path';
import type { ModelRef } from './writer.ts';
import type { ModuleSource } from '../flow/project.ts';
import { qualifiedName } from '../flow/imports.ts';
import { callParts, children, dottedName, positional, unwrap, type Node } from '../syntax.ts';

export interface ModelHost {
  readonly model: { file: string; dependencies?: string[] };
  readonly text: string;
  readonly tree: { topNode: Node };
  readonly imports: ModuleSource['imports'];
  readonly constants: Map<string, Node>;
  /** Reads a project module for this file (counted against its budget; recorded as a dependency). */
  projectModule(module: string, level: number): ModuleSource | undefined;
}

export class ModelIndex {
  private readonly local = new Map<string, ModelRef | null>();

  /** The model an expression names (`Job`, `models.Job`, `jobs_table`), if it is one we can read. */
  modelOf(node: Node, host: ModelHost): ModelRef | undefined {
    const expr = unwrap(node);
    const name = expr ? dottedName(expr, host.text) : undefined;
    if (!name || name.includes('.') && !/^\w+\.\w+$/.test(name)) return undefined;
    const cached = this.local.get(name);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.find(name, host);
    this.local.set(name, found ?? null);
    return found;
  }

  private find(name: string, host: ModelHost): ModelRef | undefined {
    const [first, second] = name.split('.');
    if (!second) {
      const here = modelIn({ path: host.model.file, text: host.text, tree: host.tree as ModuleSource['tree'], imports: host.imports, constants: host.constants }, first);
      if (here) return here;
      const imported = host.imports.fromImports.get(first);
      if (!imported) return undefined;
      const source = host.projectModule(imported.module, imported.level);
      return source ? modelIn(source, imported.name) : undefined;
    }
    // models.Job where `from . import models` / `from app import models`
    const imported = host.imports.fromImports.get(first);
    if (!imported) return undefined;
    const module = imported.module ? `${imported.module}.${imported.name}` : imported.name;
    const source = host.projectModule(module, imported.level);
    return source ? modelIn(source, second) : undefined;
  }
}

/** A model class or Core table defined at the top of `source`. */
export function modelIn(source: ModuleSource, name: string): ModelRef | undefined {
  for (const statement of children(source.tree.topNode)) {
    const def = statement.name === 'DecoratedStatement' ? statement.getChild('ClassDefinition') : statement;
    if (def?.name === 'ClassDefinition') {
      const id = def.getChild('VariableName');
      if (!id || source.text.slice(id.from, id.to) !== name) continue;
      return classModel(def, name, source);
    }
  }
  // jobs = Table("jobs", metadata, ...)
  const value = source.constants.get(name);
  const call = value ? callParts(value, source.text) : undefined;
  if (call && /(^|\.)Table$/.test(qualifiedName(call.callee, source.text, source.imports) ?? source.text.slice(call.callee.from, call.callee.to))) {
    const table = stringOf(positional(call.args, 0), source);
    if (table) return { table, name };
  }
  return undefined;
}

function stringOf(node: Node | undefined, source: ModuleSource): string | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'String') return undefined;
  return /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(source.text.slice(expr.from, expr.to))?.[2];
}

function classModel(def: Node, name: string, source: ModuleSource): ModelRef | undefined {
  const body = def.getChild('Body');
  const bases = def.getChild('ArgList');
  const baseNames = bases ? children(bases).filter((c) => c.name === 'VariableName' || c.name === 'MemberExpression').map((c) => qualifiedName(c, source.text, source.imports) ?? source.text.slice(c.from, c.to)) : [];
  let tablename: string | undefined;
  let dbTable: string | undefined;
  let appLabel: string | undefined;
  for (const statement of body ? children(body) : []) {
    if (statement.name === 'AssignStatement') {
      const [target, , value] = children(statement);
      if (target && source.text.slice(target.from, target.to) === '__tablename__') tablename = stringOf(value, source);
    } else if (statement.name === 'ClassDefinition') {
      const id = statement.getChild('VariableName');
      if (!id || source.text.slice(id.from, id.to) !== 'Meta') continue;
      for (const meta of children(statement.getChild('Body') ?? statement)) {
        if (meta.name !== 'AssignStatement') continue;
        const [target, , value] = children(meta);
        const key = target ? source.text.slice(target.from, target.to) : '';
        if (key === 'db_table') dbTable = stringOf(value, source);
        if (key === 'app_label') appLabel = stringOf(value, source);
      }
    }
  }
  if (tablename) return { table: tablename, name };
  const django = baseNames.some((b) => /^django\.db\.models\.(base\.)?Model$/.test(b) || /(^|\.)Model$/.test(b)) && source.imports.modules.has('django');
  if (django) {
    if (dbTable) return { table: dbTable, name };
    return { table: `${appLabel ?? appOf(source.path)}_${name.toLowerCase()}`, name };
  }
  // SQLModel(table=True) and declarative classes without __tablename__: the class name, lower-cased.
  if (baseNames.some((b) => /(^|\.)SQLModel$/.test(b))) return { table: name.toLowerCase(), name };
  return undefined;
}

/** The Django app of a models module: the folder of models.py, or the parent of a models/ package. */
function appOf(path: string): string {
  let dir = dirname(path);
  if (basename(dir) === 'models') dir = dirname(dir);
  return basename(dir);
}
