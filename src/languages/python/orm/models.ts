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
  projectModule(module: string, level: number, from?: string): ModuleSource | undefined;
}

/** A project module a module imports from (`from <module> import ...` in `at`), parsed; undefined outside the project. */
type Follow = (at: ModuleSource, module: string, level: number) => ModuleSource | undefined;

/** How many imports a model is followed through: a package's `__init__` re-export, a base class in another module. */
const MAX_HOPS = 3;

export class ModelIndex {
  private readonly local = new Map<string, ModelRef | null>();

  /** The model an expression names (`Job`, `models.Job`, `jobs_table`), if it is one we can read. */
  modelOf(node: Node, host: ModelHost): ModelRef | undefined {
    const expr = unwrap(node);
    const name = expr ? dottedName(expr, host.text) : undefined;
    // `Job.__table__`: the model's own Core table, whose update()/delete()/insert() build statements on it.
    if (name?.endsWith('.__table__') && expr?.name === 'MemberExpression' && expr.firstChild) {
      const model = this.modelOf(expr.firstChild, host);
      return model && !model.core ? { table: model.table, name: model.name, core: true } : undefined;
    }
    if (!name || name.includes('.') && !/^\w+\.\w+$/.test(name)) return undefined;
    const cached = this.local.get(name);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.find(name, host);
    this.local.set(name, found ?? null);
    return found;
  }

  private readonly constants = new Map<string, string | null>();

  /**
   * A literal constant of a class the code names by attribute: Django's
   * choices (`Job.Status.RUNNING` where `class Status(models.TextChoices):
   * RUNNING = "running", "Running"`), a model's `STATUS_DONE = "done"`, a
   * module's `class JobState: QUEUED = "queued"`, in this file or in the
   * project module the first name is imported from. Its SQL literal.
   */
  constantOf(node: Node, host: ModelHost): string | undefined {
    const expr = unwrap(node);
    const name = expr?.name === 'MemberExpression' ? dottedName(expr, host.text) : undefined;
    if (!name) return undefined;
    // Status.RUNNING.value: an Enum member's value.
    if (name.endsWith('.value')) return this.constantOf(expr!.firstChild!, host);
    const cached = this.constants.get(name);
    if (cached !== undefined) return cached ?? undefined;
    const found = this.findConstant(name.split('.'), host);
    this.constants.set(name, found ?? null);
    return found;
  }

  private findConstant(path: string[], host: ModelHost): string | undefined {
    if (path.length < 2 || path.length > 4) return undefined;
    const here: ModuleSource = { path: host.model.file, text: host.text, tree: host.tree as ModuleSource['tree'], imports: host.imports, constants: host.constants };
    const local = constantIn(here, path);
    if (local !== undefined) return local;
    const imported = host.imports.fromImports.get(path[0]);
    if (!imported) return undefined;
    // `from app.models import Job` then Job.Status.RUNNING; `from app import models` then models.Job.Status.RUNNING.
    const direct = host.projectModule(imported.module, imported.level);
    const there = direct ? constantIn(direct, [imported.name, ...path.slice(1)]) : undefined;
    if (there !== undefined) return there;
    const module = imported.module ? `${imported.module}.${imported.name}` : imported.name;
    const submodule = path.length > 2 ? host.projectModule(module, imported.level) : undefined;
    return submodule ? constantIn(submodule, path.slice(1)) : undefined;
  }

  private find(name: string, host: ModelHost): ModelRef | undefined {
    const [first, second] = name.split('.');
    const follow: Follow = (at, module, level) => host.projectModule(module, level, at.path);
    if (!second) {
      const here = modelIn({ path: host.model.file, text: host.text, tree: host.tree as ModuleSource['tree'], imports: host.imports, constants: host.constants }, first, follow);
      if (here) return here;
      const imported = host.imports.fromImports.get(first);
      if (!imported) return undefined;
      const source = host.projectModule(imported.module, imported.level);
      return source ? modelIn(source, imported.name, follow) : undefined;
    }
    // models.Job where `from . import models` / `from app import models`
    const imported = host.imports.fromImports.get(first);
    if (!imported) return undefined;
    const module = imported.module ? `${imported.module}.${imported.name}` : imported.name;
    const source = host.projectModule(module, imported.level);
    return source ? modelIn(source, second, follow) : undefined;
  }
}

/**
 * A model class or Core table defined at the top of `source`, or imported
 * there from a project module (`from .concrete import Job` in a models
 * package's `__init__`), when `follow` may read that module.
 */
export function modelIn(source: ModuleSource, name: string, follow?: Follow, hops = 0): ModelRef | undefined {
  const def = classIn(source, name);
  if (def) {
    const model = classModel(def, name, source, follow, hops);
    if (!model) return undefined;
    const { django: _django, ...ref } = model;
    return ref;
  }
  const imported = follow && hops < MAX_HOPS ? source.imports.fromImports.get(name) : undefined;
  const there = imported ? follow!(source, imported.module, imported.level) : undefined;
  if (there) return modelIn(there, imported!.name, follow, hops + 1);
  // jobs = Table("jobs", metadata, ...)
  const value = source.constants.get(name);
  const call = value ? callParts(value, source.text) : undefined;
  if (call && /(^|\.)Table$/.test(qualifiedName(call.callee, source.text, source.imports) ?? source.text.slice(call.callee.from, call.callee.to))) {
    const table = stringOf(positional(call.args, 0), source);
    if (table) return { table, name, core: true };
  }
  return undefined;
}

function stringOf(node: Node | undefined, source: ModuleSource): string | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'String') return undefined;
  return /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(source.text.slice(expr.from, expr.to))?.[2];
}

/** The class `name` defined at the top of `source`. */
function classIn(source: ModuleSource, name: string): Node | undefined {
  for (const statement of children(source.tree.topNode)) {
    const def = statement.name === 'DecoratedStatement' ? statement.getChild('ClassDefinition') : statement;
    if (def?.name !== 'ClassDefinition') continue;
    const id = def.getChild('VariableName');
    if (id && source.text.slice(id.from, id.to) === name) return def;
  }
  return undefined;
}

/**
 * A base class of the project that is a Django model itself (an abstract
 * model the concrete one extends: `class Job(AbstractJob)`), in `source` or
 * in the project module it is imported from.
 */
function projectDjangoBase(base: Node, source: ModuleSource, follow: Follow | undefined, hops: number): boolean {
  if (base.name !== 'VariableName' || hops >= MAX_HOPS) return false;
  const name = source.text.slice(base.from, base.to);
  let at: ModuleSource | undefined = source;
  let className = name;
  let def = classIn(source, name);
  if (!def && follow) {
    const imported = source.imports.fromImports.get(name);
    at = imported ? follow(source, imported.module, imported.level) : undefined;
    className = imported?.name ?? name;
    def = at ? classIn(at, className) : undefined;
  }
  return !!(def && at && classModel(def, className, at, follow, hops + 1)?.django);
}

function classModel(def: Node, name: string, source: ModuleSource, follow?: Follow, hops = 0): (ModelRef & { django?: boolean }) | undefined {
  const body = def.getChild('Body');
  const bases = def.getChild('ArgList');
  const baseNames = bases ? children(bases).filter((c) => c.name === 'VariableName' || c.name === 'MemberExpression').map((c) => qualifiedName(c, source.text, source.imports) ?? source.text.slice(c.from, c.to)) : [];
  let tablename: string | undefined;
  let dbTable: string | undefined;
  let appLabel: string | undefined;
  let manager: ModelRef['manager'];
  for (const statement of body ? children(body) : []) {
    if (statement.name === 'AssignStatement') {
      const [target, , value] = children(statement);
      if (target && source.text.slice(target.from, target.to) === '__tablename__') tablename = stringOf(value, source);
      if (target && value && source.text.slice(target.from, target.to) === 'objects') manager = { source, value };
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
  // A base of the project's own is followed to its module, which imports django itself.
  const django =
    (source.imports.modules.has('django') && baseNames.some((b) => /^django\.db\.models\.(base\.)?Model$/.test(b) || /(^|\.)Model$/.test(b))) ||
    (!!bases && children(bases).some((b) => projectDjangoBase(b, source, follow, hops)));
  if (django) {
    const table = dbTable ?? `${appLabel ?? appOf(source.path)}_${name.toLowerCase()}`;
    const definedIn = { source, def };
    return manager ? { table, name, manager, django, definedIn } : { table, name, django, definedIn };
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

/** The SQL literal of `A.B.C` where class A is defined at the top of `source` (no imports followed). */
export function moduleConstant(source: ModuleSource, node: Node): string | undefined {
  const name = dottedName(unwrap(node), source.text);
  return name ? constantIn(source, name.replace(/\.value$/, '').split('.')) : undefined;
}

/** `A.B.C`: class A at the top of `source`, its nested class B, its `C = <literal>` (or `C = <literal>, <label>`). */
function constantIn(source: ModuleSource, path: string[]): string | undefined {
  let statements = children(source.tree.topNode);
  for (let i = 0; i < path.length - 1; i++) {
    const cls = statements
      .map((s) => (s.name === 'DecoratedStatement' ? s.getChild('ClassDefinition') : s))
      .find((s) => s?.name === 'ClassDefinition' && nameOf(s, source) === path[i]);
    const body = cls?.getChild('Body');
    if (!body) return undefined;
    statements = children(body);
  }
  const last = path[path.length - 1];
  let found: string | undefined;
  let assignments = 0;
  for (const statement of statements) {
    if (statement.name !== 'AssignStatement') continue;
    const parts = children(statement);
    if (parts.length < 3 || parts[1].name !== 'AssignOp' || source.text.slice(parts[0].from, parts[0].to) !== last) continue;
    assignments++;
    found = sqlLiteral(parts[2], source.text);
  }
  return assignments === 1 ? found : undefined;
}

function nameOf(def: Node, source: ModuleSource): string | undefined {
  const id = def.getChild('VariableName');
  return id ? source.text.slice(id.from, id.to) : undefined;
}

/** A Python string or integer literal as SQL. */
function sqlLiteral(node: Node, text: string): string | undefined {
  const expr = unwrap(node);
  if (!expr) return undefined;
  const value = text.slice(expr.from, expr.to);
  if (expr.name === 'Number') return /^-?\d+$/.test(value) ? value : undefined;
  if (expr.name !== 'String') return undefined;
  const literal = /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(value);
  return literal ? `'${literal[2].replace(/'/g, "''")}'` : undefined;
}
