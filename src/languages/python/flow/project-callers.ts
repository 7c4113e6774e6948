// What the calls of a module-level function pass for one of its parameters,
// read in every module of the project that imports and calls it: a worker
// loop (`service.py`) hands the claim helper of `queue.py` its clock
// (`now=datetime.now(UTC)`) and its lease length (`lease_seconds=
// settings.worker_lease_seconds`). params.ts's passedToParameter reads the
// calls of the file only; this reads the project's, for the ORM writer's
// clock and lease length, and only where every call of the unit passes a
// value it can read.
//
// Bounded: the project is project-files.ts's (its files, without tests and
// migrations, at most MAX_FILES); a value is followed a few steps through the
// caller's own names, its module's constants and imports, a parameter's
// default or the one value the caller assigns it, and a settings object's
// class default (`settings = get_settings()` returning `Settings()`, whose
// body says `worker_lease_seconds: int = 30`). Callers of the caller in
// other modules are not read.
import { basename, dirname, resolve } from 'node:path';
import { decodeText, readRegularFile } from '../../../read-file.ts';
import { callParts, children, keyword, unwrap, type Node } from '../syntax.ts';
import { assignedToParameter, parameters } from './defs.ts';
import { qualifiedName } from './imports.ts';
import { importRoot, moduleDef, readModule, resolveModule, returnedCall, type ModuleSource } from './project.ts';
import { projectFiles } from './project-files.ts';
import { PerScanMap } from '../../../scan-generation.ts';

/** An argument some call of the function passes (or the parameter's default, where a call passes none), where it is written. */
export interface PassedArgument {
  node: Node;
  source: ModuleSource;
  /** The function the call is in: its parameters and the names it assigns once. */
  def?: Node;
}

const MAX_BYTES = 512 * 1024;
const MAX_DEPTH = 6;

/** The Python files of a project, read once per scan. */
interface ProjectTexts {
  paths: string[];
  resolved: string[];
  texts: string[];
  /** The files each word is written in, by index (filesWriting). */
  words?: Map<string, number[]>;
}

const texts = new PerScanMap<string, ProjectTexts | null>();

export function clearProjectCallers(): void {
  texts.clear();
}

function projectTexts(root: string): ProjectTexts | undefined {
  const known = texts.get(root);
  if (known !== undefined) return known ?? undefined;
  const files = projectFiles(root);
  let project: ProjectTexts | undefined;
  if (files) {
    project = { paths: [], resolved: [], texts: [] };
    for (const path of files) {
      try {
        const text = decodeText(readRegularFile(path, MAX_BYTES));
        project.paths.push(path);
        project.resolved.push(resolve(path));
        project.texts.push(text);
      } catch {
        // Unreadable or too large: its calls are not read.
      }
    }
  }
  texts.set(root, project ?? null);
  return project;
}

/**
 * The files of the project that write `name` as a word (a call or an import of it must): every file's words are
 * indexed once, at the first question, for a project is asked about many names.
 */
function filesWriting(project: ProjectTexts, name: string): readonly number[] {
  if (!project.words) {
    const words = new Map<string, number[]>();
    project.texts.forEach((text, i) => {
      for (const [word] of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
        const list = words.get(word);
        if (!list) words.set(word, [i]);
        else if (list[list.length - 1] !== i) list.push(i);
      }
    });
    project.words = words;
  }
  return project.words.get(name) ?? [];
}

/**
 * What every call of `def` (a function at the top of the module `own`) in the project passes for its parameter
 * `name`; no args when no call is found, or one call spreads `*args`/`**kwargs` or passes nothing where the
 * parameter has no default. `files` are the project's files whenever they were searched, whatever the answer:
 * an edit to any of them can add, drop or change a call, so a cached analysis holds only while none changes.
 * Undefined when the function is no module-level one or there is no project to search.
 */
export function projectArguments(own: ModuleSource, def: Node, name: string): { args?: PassedArgument[]; files: string[] } | undefined {
  const top = def.parent?.name === 'DecoratedStatement' ? def.parent.parent : def.parent;
  if (top?.name !== 'Script') return undefined;
  const defId = def.getChild('VariableName');
  const defName = defId ? own.text.slice(defId.from, defId.to) : undefined;
  const params = parameters(def, own.text).filter((p) => p.kind === 'normal');
  const index = params.findIndex((p) => p.name === name);
  if (!defName || index < 0) return undefined;
  const root = importRoot(own.path, own.imports.modules);
  const project = root ? projectTexts(root) : undefined;
  if (!project) return undefined;
  const ownPath = resolve(own.path);
  const args: PassedArgument[] = [];
  const files = project.paths;
  const sources: ModuleSource[] = [own];
  // A caller imports the function from its module (importedAs), so it writes the module's name too: the others are not parsed.
  const moduleName = basename(ownPath, '.py') === '__init__' ? basename(dirname(ownPath)) : basename(ownPath, '.py');
  const importers = new Set(filesWriting(project, moduleName));
  for (const i of filesWriting(project, defName)) {
    if (project.resolved[i] === ownPath || !importers.has(i)) continue;
    const source = readModule(project.paths[i]);
    if (source) sources.push(source);
  }
  for (const source of sources) {
    const names = source === own ? new Set([defName]) : importedAs(source, defName, ownPath);
    if (names.size === 0) continue;
    const calls = [...names].flatMap((n) => callsByName(source).get(n) ?? []).sort((a, b) => a.from - b.from);
    for (const node of calls) {
      const call = callParts(node, source.text)!;
      if (call.args.some((a) => a.star)) return { files };
      const arg = keyword(call.args, name) ?? (params[index].keywordOnly ? undefined : call.args.filter((a) => !a.name)[index]?.value);
      if (arg) args.push({ node: arg, source, def: enclosingDef(node) });
      else if (params[index].default) args.push({ node: params[index].default!, source: own });
      else return { files };
    }
  }
  return args.length > 0 ? { args, files } : { files };
}

/** The calls of a module by the name they call (`claim(...)`), found in one walk per module and scan: a module is asked about several functions and parameters. */
const callIndex = new WeakMap<object, Map<string, Node[]>>();

function callsByName(source: ModuleSource): Map<string, Node[]> {
  let found = callIndex.get(source.tree);
  if (!found) {
    const byName = new Map<string, Node[]>();
    source.tree.iterate({
      enter(ref) {
        if (ref.name !== 'CallExpression') return;
        const call = callParts(ref.node, source.text);
        if (call?.callee.name !== 'VariableName') return;
        const name = source.text.slice(call.callee.from, call.callee.to);
        const list = byName.get(name);
        if (list) list.push(ref.node);
        else byName.set(name, [ref.node]);
      },
    });
    callIndex.set(source.tree, (found = byName));
  }
  return found;
}

/** The local names a module binds the function to: `from app.queue import claim as take`. */
function importedAs(source: ModuleSource, defName: string, ownPath: string): Set<string> {
  const names = new Set<string>();
  for (const [local, from] of source.imports.fromImports) {
    if (from.name !== defName) continue;
    const path = resolveModule(source.path, from.module, from.level);
    if (path && resolve(path) === ownPath) names.add(local);
  }
  return names;
}

function enclosingDef(node: Node): Node | undefined {
  for (let at = node.parent; at; at = at.parent) if (at.name === 'FunctionDefinition') return at;
  return undefined;
}

/** The number an argument amounts to: a literal, arithmetic of numbers, or a name or settings attribute holding one. */
export function passedNumber(arg: PassedArgument, depth = 0): number | undefined {
  const expr = unwrap(arg.node);
  if (!expr || depth > MAX_DEPTH) return undefined;
  const { source } = arg;
  const text = source.text.slice(expr.from, expr.to);
  const next = (node: Node | undefined, within: PassedArgument = arg) => (node ? passedNumber({ ...within, node }, depth + 1) : undefined);
  switch (expr.name) {
    case 'Number':
      return /^\d[\d_]*(\.\d+)?$/.test(text) ? Number(text.replace(/_/g, '')) : undefined;
    case 'BinaryExpression': {
      const [left, op, right] = children(expr);
      const a = next(left);
      const b = next(right);
      if (a === undefined || b === undefined || !op) return undefined;
      const operator = source.text.slice(op.from, op.to);
      return operator === '*' ? a * b : operator === '+' ? a + b : operator === '-' ? a - b : undefined;
    }
    case 'CallExpression': {
      // int(x) / float(x) of a number is that number.
      const call = callParts(expr, source.text);
      const callee = call ? source.text.slice(call.callee.from, call.callee.to) : '';
      return (callee === 'int' || callee === 'float') && call?.args.length === 1 && !call.args[0].name ? next(call.args[0].value) : undefined;
    }
    case 'VariableName':
      return agreed(valuesOf(arg, text).map((v) => passedNumber(v, depth + 1)));
    case 'MemberExpression': {
      const object = expr.firstChild;
      const attribute = expr.lastChild;
      if (object?.name !== 'VariableName' || attribute?.name !== 'PropertyName') return undefined;
      const made = valuesOf(arg, source.text.slice(object.from, object.to));
      const name = source.text.slice(attribute.from, attribute.to);
      return agreed(made.map((m) => settingsDefault(m, name, depth + 1)));
    }
    default:
      return undefined;
  }
}

/** An argument that reads the clock: `datetime.now(UTC)`, or a name assigned it once. */
export function passedClock(arg: PassedArgument, isNow: (qualified: string) => boolean, depth = 0): boolean {
  const expr = unwrap(arg.node);
  if (!expr || depth > MAX_DEPTH) return false;
  if (expr.name === 'CallExpression') {
    const callee = expr.firstChild;
    return !!callee && isNow(qualifiedName(callee, arg.source.text, arg.source.imports) ?? arg.source.text.slice(callee.from, callee.to));
  }
  if (expr.name !== 'VariableName') return false;
  const values = valuesOf(arg, arg.source.text.slice(expr.from, expr.to));
  return values.length > 0 && values.every((v) => passedClock(v, isNow, depth + 1));
}

/**
 * The values the calls of a module-level `def` in its own module pass for its parameter `name` (none when it is not
 * called there); undefined when one spreads `*args` or the def is a method, whose calls are not read.
 */
function callsInModule(source: ModuleSource, def: Node, name: string): PassedArgument[] | undefined {
  const top = def.parent?.name === 'DecoratedStatement' ? def.parent.parent : def.parent;
  if (top?.name !== 'Script') return undefined;
  const id = def.getChild('VariableName');
  const defName = id ? source.text.slice(id.from, id.to) : '';
  const params = parameters(def, source.text).filter((p) => p.kind === 'normal');
  const index = params.findIndex((p) => p.name === name && !p.keywordOnly);
  const found: PassedArgument[] = [];
  let complete = true;
  source.tree.iterate({
    enter(ref) {
      if (!complete || ref.name !== 'CallExpression') return;
      const call = callParts(ref.node, source.text);
      if (call?.callee.name !== 'VariableName' || source.text.slice(call.callee.from, call.callee.to) !== defName) return;
      if (call.args.some((a) => a.star)) return void (complete = false);
      const arg = keyword(call.args, name) ?? (index >= 0 ? call.args.filter((a) => !a.name)[index]?.value : undefined);
      if (arg) found.push({ node: arg, source, def: enclosingDef(ref.node) });
    },
  });
  return complete ? found : undefined;
}

/** One value every source of a number agrees on. */
function agreed(values: (number | undefined)[]): number | undefined {
  return values.length > 0 && values.every((v) => v !== undefined && v === values[0]) ? values[0] : undefined;
}

/**
 * What a name holds where the argument is written: a parameter of the caller (its default, or the values the
 * caller assigns it in its place — `if lease is None: lease = settings.lease`, where the `None` default is replaced),
 * a name the caller assigns once, a constant of the module, or one it imports from a project module.
 */
function valuesOf(arg: PassedArgument, name: string): PassedArgument[] {
  const { source, def } = arg;
  if (def) {
    const param = parameters(def, source.text).find((p) => p.name === name);
    const assigned = assignedToParameter(def, source.text, name).map((node) => ({ node, source, def }));
    if (param) {
      // What the caller's own callers in its module pass, too: every value the parameter can hold must agree.
      const passed = callsInModule(source, def, name);
      if (passed === undefined) return [];
      const fallback = unwrap(param.default);
      const kept = fallback && fallback.name !== 'None' ? [{ node: fallback, source }] : [];
      if (assigned.length > 0) return [...assigned, ...kept, ...passed];
      return kept.length > 0 ? [...kept, ...passed] : [];
    }
    if (assigned.length === 1) return assigned;
    if (assigned.length > 1) return [];
  }
  const constant = source.constants.get(name);
  if (constant) return [{ node: constant, source }];
  const from = source.imports.fromImports.get(name);
  const path = from ? resolveModule(source.path, from.module, from.level) : undefined;
  const there = path ? readModule(path) : undefined;
  const value = there && from ? there.constants.get(from.name) : undefined;
  return there && value ? [{ node: value, source: there }] : [];
}

/**
 * The default a settings class gives `name`, for an object made by `Settings()` with no arguments, or by a project
 * function whose one return is such a call (`get_settings()`, an `lru_cache` factory), in the module or one it imports.
 */
function settingsDefault(made: PassedArgument, name: string, depth: number): number | undefined {
  const call = unwrap(made.node);
  if (call?.name !== 'CallExpression' || depth > MAX_DEPTH) return undefined;
  const parts = callParts(call, made.source.text);
  if (parts?.callee.name !== 'VariableName' || parts.args.length > 0) return undefined;
  const found = topLevel(made.source, made.source.text.slice(parts.callee.from, parts.callee.to));
  if (!found) return undefined;
  if (found.node.name === 'FunctionDefinition') {
    const returned = returnedCall(found.node);
    return returned ? settingsDefault({ node: returned, source: found.source }, name, depth + 1) : undefined;
  }
  const value = classDefault(found.node, found.source.text, name);
  return value ? passedNumber({ node: value, source: found.source }, depth + 1) : undefined;
}

/** A class or function at the top of the module, or of the project module it is imported from. */
function topLevel(source: ModuleSource, name: string): { node: Node; source: ModuleSource } | undefined {
  const def = moduleDef(source, name);
  if (def) return { node: def, source };
  for (let c = source.tree.topNode.firstChild; c; c = c.nextSibling) {
    const node = c.name === 'DecoratedStatement' ? c.getChild('ClassDefinition') : c;
    const id = node?.name === 'ClassDefinition' ? node.getChild('VariableName') : null;
    if (node && id && source.text.slice(id.from, id.to) === name) return { node, source };
  }
  const from = source.imports.fromImports.get(name);
  const path = from ? resolveModule(source.path, from.module, from.level) : undefined;
  const there = path ? readModule(path) : undefined;
  return there && from && there !== source ? topLevel(there, from.name) : undefined;
}

/** `name: int = 30` or `name = 30` in the class's own body, assigned there once. */
function classDefault(cls: Node, text: string, name: string): Node | undefined {
  const values: Node[] = [];
  for (let s = cls.getChild('Body')?.firstChild; s; s = s.nextSibling) {
    if (s.name !== 'AssignStatement') continue;
    const parts = children(s).filter((p) => p.name !== 'TypeDef');
    if (parts.length === 3 && parts[0].name === 'VariableName' && parts[1].name === 'AssignOp' && text.slice(parts[0].from, parts[0].to) === name) values.push(parts[2]);
  }
  return values.length === 1 ? values[0] : undefined;
}
