// What the callers of a module-level function, anywhere in its project unit,
// pass for one of its parameters or a property of an options parameter: a
// worker loop (`worker.ts`) hands the claim helper of `repository.ts` its
// lease length (`claimNextTask({ workerId, leaseMs: 5 * 60_000 })`). The
// walk reads the length as the callers' (`opts.leaseMs`); this reads every
// call in the unit (the folder of the nearest package.json, without tests,
// node_modules and build output), and a number counts only where every call
// passes one and all agree. A call that spreads its arguments or its options,
// leaves the value out (with no literal default), a use of the function other
// than a call, or a value it cannot read: unknown, and the length stays the
// callers'. The Python front end's flow/project-callers.ts does the same.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { extname, resolve } from 'node:path';
import { isTestPath } from '../../../model/test-evidence.ts';
import { decodeText, readRegularFile } from '../../../read-file.ts';
import { PerScanMap } from '../../../scan-generation.ts';
import { walkProject } from '../../../project-walk.ts';
import { parseTypeScriptProgram } from '../parse.ts';
import { children, isFunction, memberKeyName, patternNames, propertyName, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import type { Env } from './env.ts';
import { resolveProjectModule, unitRoot } from './modules.ts';
import { parameterOf } from './parameters.ts';

const MAX_FILES = 2000;
const MAX_BYTES = 256 * 1024;
const MAX_DEPTH = 6;
const SOURCE = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);
const SKIP_DIRS = /^(node_modules|dist|build|out|coverage|\..*)$/;

interface ProjectFile {
  path: string;
  text: string;
  program?: TSESTree.Program | null;
}

/**
 * The source files of each unit, read once per scan (null: too many, or none). An ESLint session runs no scan,
 * so there they are read once per process: an editor's long session keeps the first answer.
 */
const units = new PerScanMap<string, ProjectFile[] | null>();
/** The agreed number by function, parameter and property (null: unknown), per scan as the units. */
const answers = new PerScanMap<string, { value: number | null; files: string[] }>();

/** The answers whose files a dependency list was given already. */
const pushed = new WeakMap<string[], Set<string>>();

export function clearProjectCallers(): void {
  units.clear();
  answers.clear();
}

function unitFiles(root: string): ProjectFile[] | undefined {
  const known = units.get(root);
  if (known !== undefined) return known ?? undefined;
  const paths = walkProject(root, {
    skipDirs: SKIP_DIRS,
    accept: (name, path) => SOURCE.has(extname(name)) && !name.endsWith('.d.ts') && !isTestPath(path.slice(root.length)),
    maxFiles: MAX_FILES,
  });
  const files: ProjectFile[] = [];
  let tooMany = paths === undefined;
  for (const path of paths ?? []) {
    try {
      files.push({ path: resolve(path), text: decodeText(readRegularFile(path, MAX_BYTES)) });
    } catch {
      // Too large or unreadable: its calls are not read (the others may still agree; it may call too, so give up).
      tooMany = true;
      break;
    }
  }
  units.set(root, tooMany || files.length === 0 ? null : files);
  return tooMany ? undefined : files;
}

function programOf(file: ProjectFile): TSESTree.Program | undefined {
  if (file.program === undefined) {
    try {
      file.program = parseTypeScriptProgram(file.text, file.path);
    } catch {
      file.program = null;
    }
  }
  return file.program ?? undefined;
}

/** The name a module gives a function at its top (`export function claim`, `export const claim = async (...) =>`). */
function topLevelName(program: TSESTree.Program, fn: FunctionNode): string | undefined {
  for (const statement of program.body) {
    const s = statement.type === 'ExportNamedDeclaration' && statement.declaration ? statement.declaration : statement;
    if (s === fn && s.type === 'FunctionDeclaration') return s.id?.name;
    if (s.type !== 'VariableDeclaration' || s.kind !== 'const') continue;
    for (const d of s.declarations) if (unwrap(d.init as Node | null) === fn && d.id.type === 'Identifier') return d.id.name;
  }
  return undefined;
}

/**
 * A number every call of the function a parameter (or a property of it: `opts.leaseMs`, `{ leaseMs }`) belongs to
 * passes, read in every module of the unit; `files` gets the modules read. Undefined when the name holds no such
 * parameter of a module-level function, or the calls do not all pass one agreed number.
 */
export function callerNumber(module: string, program: TSESTree.Program, env: Env, node: Node, files: string[]): number | undefined {
  const n = unwrap(node);
  if (n?.type === 'MemberExpression') {
    const kept = constructorOption(program, n);
    if (kept) return agreed(module, `${kept.name}:new`, kept.name, kept.ctor, kept.parameter, kept.property, 'new', files);
  }
  const root = n?.type === 'MemberExpression' ? unwrap(n.object) : n;
  const fn = root?.type === 'Identifier' ? env.holder(root.name)?.fn : undefined;
  const ref = parameterOf(env, module, node) ?? (n?.type === 'Identifier' && fn ? defaultedProperty(env, fn, n.name) : undefined);
  if (!ref || !fn || (ref.function !== undefined && fn.range[0] !== ref.function.at)) return undefined;
  const name = topLevelName(program, fn);
  if (!name) return undefined;
  return agreed(module, String(fn.range[0]), name, fn, ref.parameter, ref.property, 'call', files);
}

function agreed(module: string, at: string, name: string, fn: FunctionNode, parameter: number, property: string | undefined, how: 'call' | 'new', files: string[]): number | undefined {
  const key = `${resolve(module)}:${at}:${parameter}:${property ?? ''}`;
  let answer = answers.get(key);
  if (!answer) {
    answer = { value: null, files: [] };
    answers.set(key, answer); // A cycle of callers reads as unknown.
    const found = agreedArgument(module, name, fn, parameter, property, how, answer.files);
    answer.value = found ?? null;
  }
  // Once per answer and list: a file's sites ask again and again.
  const given = pushed.get(files) ?? new Set<string>();
  pushed.set(files, given);
  if (!given.has(key)) for (const f of answer.files) files.push(f);
  given.add(key);
  return answer.value ?? undefined;
}

/**
 * `this.options.leaseMs` in a method of a class at the top of the module, where the constructor keeps its parameter
 * as `options` (`constructor(private options: Options)`, or `this.options = options` its one assignment in the class):
 * the constructor, the parameter and the property its `new` calls pass.
 */
function constructorOption(program: TSESTree.Program, n: TSESTree.MemberExpression): { name: string; ctor: FunctionNode; parameter: number; property: string } | undefined {
  const kept = unwrap(n.object);
  const property = propertyName(n);
  if (n.computed || property === undefined || kept?.type !== 'MemberExpression' || kept.computed || unwrap(kept.object)?.type !== 'ThisExpression') return undefined;
  const field = propertyName(kept);
  const cls = program.body
    .map((s) => (s.type === 'ExportNamedDeclaration' || s.type === 'ExportDefaultDeclaration' ? s.declaration : s))
    .find((s): s is TSESTree.ClassDeclaration => s?.type === 'ClassDeclaration' && s.range[0] <= n.range[0] && n.range[1] <= s.range[1]);
  const made = cls?.body.body.find((m): m is TSESTree.MethodDefinition => m.type === 'MethodDefinition' && m.kind === 'constructor')?.value;
  const ctor = made?.type === 'FunctionExpression' ? made : undefined;
  if (!cls?.id || !ctor || field === undefined) return undefined;
  // Every write of the field, or of a member of it, anywhere in the class.
  const writes: Node[] = [];
  visit(cls, [], (at) => {
    if (at.type !== 'AssignmentExpression' && at.type !== 'UpdateExpression') return;
    let target = unwrap(at.type === 'AssignmentExpression' ? at.left : at.argument);
    while (target?.type === 'MemberExpression') {
      const object = unwrap(target.object);
      if (object?.type === 'ThisExpression' && propertyName(target) === field) writes.push(at);
      target = object;
    }
  });
  const params = ctor.params;
  let parameter = params.findIndex((p) => p.type === 'TSParameterProperty' && keptName(p.parameter) === field);
  if (parameter >= 0 && writes.length > 0) return undefined;
  if (parameter < 0) {
    const write = writes.length === 1 && writes[0].type === 'AssignmentExpression' && writes[0].operator === '=' ? unwrap(writes[0].right) : undefined;
    const inCtor = writes.length === 1 && ctor.range[0] <= writes[0].range[0] && writes[0].range[1] <= ctor.range[1];
    if (!inCtor || write?.type !== 'Identifier') return undefined;
    parameter = params.findIndex((p) => p.type === 'Identifier' && p.name === write.name);
    // The parameter must reach the field as handed in: not bound again in the constructor.
    let rebound = false;
    visit(ctor, [], (at) => {
      if (at.type === 'AssignmentExpression' && unwrap(at.left)?.type === 'Identifier' && (unwrap(at.left) as TSESTree.Identifier).name === write.name) rebound = true;
    });
    if (rebound) return undefined;
  }
  return parameter < 0 ? undefined : { name: cls.id.name, ctor, parameter, property };
}

function keptName(p: TSESTree.TSParameterProperty['parameter']): string | undefined {
  const id = p.type === 'AssignmentPattern' ? p.left : p;
  return id.type === 'Identifier' ? id.name : undefined;
}

/** `{ leaseMs = 300_000 }` in the parameter list, not bound again since: the property of that parameter. */
function defaultedProperty(env: Env, fn: FunctionNode, name: string): { function?: undefined; parameter: number; property: string } | undefined {
  if (env.holder(name)?.rebound.has(name)) return undefined;
  const params = fn.params.filter((p) => !(p.type === 'Identifier' && p.name === 'this'));
  for (const [parameter, param] of params.entries()) {
    const pattern = param.type === 'AssignmentPattern' ? param.left : param;
    if (pattern.type !== 'ObjectPattern') continue;
    for (const p of pattern.properties) {
      if (p.type !== 'Property' || p.computed || p.value.type !== 'AssignmentPattern' || p.value.left.type !== 'Identifier' || p.value.left.name !== name) continue;
      const property = memberKeyName(p);
      return property === undefined ? undefined : { parameter, property };
    }
  }
  return undefined;
}

function agreedArgument(module: string, name: string, fn: FunctionNode, index: number, property: string | undefined, how: 'call' | 'new', files: string[]): number | undefined {
  const own = resolve(module);
  const root = unitRoot(own);
  const project = root === resolve('/') ? undefined : unitFiles(root);
  if (!project || !project.some((f) => f.path === own)) return undefined;
  // Any file of the unit can add, drop or change a call: the answer, known or not, rests on them all (the scan cache).
  for (const file of project) if (file.path !== own) files.push(file.path);
  const declared = fn.params.filter((p) => !(p.type === 'Identifier' && p.name === 'this'))[index] as Node | undefined;
  const param = declared?.type === 'TSParameterProperty' ? declared.parameter : declared;
  const values: (number | undefined)[] = [];
  for (const file of project) {
    if (!file.text.includes(name)) continue;
    const program = programOf(file);
    if (!program) return undefined;
    const local = file.path === own ? name : importedName(program, file.path, own, name);
    if (local === undefined) continue;
    if (local === null) return undefined;
    let complete = true;
    visit(program, [], (at, path) => {
      if (!complete || at.type !== 'Identifier' || at.name !== local) return;
      const parent = path[path.length - 1];
      // The declaration itself, an import of it, a property key or member named alike: not a use.
      if (isDeclarationName(at, parent)) return;
      if (parent?.type !== (how === 'new' ? 'NewExpression' : 'CallExpression') || (parent as TSESTree.CallExpression).callee !== at) return void (complete = false);
      if (parent.arguments.slice(0, index + 1).some((a) => a.type === 'SpreadElement')) return void (complete = false);
      const arg = parent.arguments[index] as Node | undefined;
      values.push(passedValue(program, path, arg, param, property));
    });
    if (!complete) return undefined;
  }
  return values.length > 0 && values.every((v) => v !== undefined && v === values[0]) ? values[0] : undefined;
}

/**
 * The local name a module imports the function by (undefined: it does not; null: it may reach it in a way not
 * read, whose calls would go unseen: a namespace or default import, a re-export, `require()` or `import()` of the
 * module, or the same name imported from another project module, which may re-export it).
 */
function importedName(program: TSESTree.Program, from: string, own: string, name: string): string | null | undefined {
  let local: string | null | undefined;
  const leadsTo = (specifier: unknown) => {
    const target = typeof specifier === 'string' ? resolveProjectModule(from, specifier) : undefined;
    return target === undefined ? undefined : resolve(target) === own;
  };
  for (const statement of program.body) {
    if ((statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportAllDeclaration') && statement.source && leadsTo(statement.source.value)) return null;
    if (statement.type !== 'ImportDeclaration') continue;
    const ours = leadsTo(statement.source.value);
    for (const s of statement.specifiers) {
      const imported = s.type === 'ImportSpecifier' ? (s.imported.type === 'Identifier' ? s.imported.name : s.imported.value) : undefined;
      if (ours === false && imported === name) return null;
      if (!ours) continue;
      if (imported === name) local = s.local.name;
      else if (s.type !== 'ImportSpecifier') local = null;
    }
  }
  if (local === null) return null;
  let dynamic = false;
  visit(program, [], (at) => {
    if (dynamic) return;
    if (at.type === 'ImportExpression' && at.source.type === 'Literal' && leadsTo(at.source.value)) dynamic = true;
    const callee = at.type === 'CallExpression' ? unwrap(at.callee) : undefined;
    if (at.type === 'CallExpression' && callee?.type === 'Identifier' && callee.name === 'require' && at.arguments[0]?.type === 'Literal' && leadsTo(at.arguments[0].value)) dynamic = true;
  });
  return dynamic ? null : local;
}

function isDeclarationName(at: TSESTree.Identifier, parent: Node | undefined): boolean {
  if (!parent) return false;
  if (parent.type === 'ImportSpecifier') return true;
  // `export { take }` hands it out by its name (read in the importers); `export { take as claim }` is not read.
  if (parent.type === 'ExportSpecifier') return (parent.exported.type === 'Identifier' ? parent.exported.name : parent.exported.value) === at.name;
  if ((parent.type === 'FunctionDeclaration' || parent.type === 'ClassDeclaration') && parent.id === at) return true;
  // A type (`worker: Worker`, `typeof claim`): no value passes.
  if (parent.type === 'TSTypeReference' || parent.type === 'TSTypeQuery' || parent.type === 'TSQualifiedName') return true;
  if (parent.type === 'VariableDeclarator' && parent.id === at) return true;
  if (parent.type === 'MemberExpression' && parent.property === at && !parent.computed) return true;
  if ((parent.type === 'Property' || parent.type === 'MethodDefinition' || parent.type === 'PropertyDefinition') && parent.key === at && !parent.computed) {
    return !(parent.type === 'Property' && parent.shorthand);
  }
  return false;
}

function visit(node: Node, path: Node[], enter: (node: Node, path: Node[]) => void): void {
  enter(node, path);
  path.push(node);
  for (const child of children(node)) visit(child, path, enter);
  path.pop();
}

/** The number a call passes for the parameter (or its property), or the default the parameter gives where it passes none. */
function passedValue(program: TSESTree.Program, path: Node[], arg: Node | undefined, param: Node | undefined, property: string | undefined): number | undefined {
  const given = unwrap(arg);
  if (property === undefined) {
    if (given) return numberIn(program, path, given, 0);
    return param?.type === 'AssignmentPattern' ? literalNumber(param.right as Node) : undefined;
  }
  const object = given?.type === 'Identifier' ? localConst(program, path, given.name) : given;
  if (object?.type !== 'ObjectExpression') return given ? undefined : patternDefault(param, property);
  if (object.properties.some((p) => p.type !== 'Property' || p.computed)) return undefined;
  const found = object.properties.find((p) => p.type === 'Property' && memberKeyName(p) === property) as TSESTree.Property | undefined;
  if (!found) return patternDefault(param, property);
  if (found.shorthand && found.value.type === 'Identifier') return numberIn(program, path, found.value, 0);
  return numberIn(program, path, found.value as Node, 0);
}

/** `{ leaseMs = 300_000 }: Options` in the parameter list: the literal default of the property. */
function patternDefault(param: Node | undefined, property: string): number | undefined {
  const pattern = param?.type === 'AssignmentPattern' ? param.left : param;
  if (pattern?.type !== 'ObjectPattern') return undefined;
  for (const p of pattern.properties) {
    if (p.type === 'Property' && !p.computed && memberKeyName(p) === property && p.value.type === 'AssignmentPattern') return literalNumber(p.value.right as Node);
  }
  return undefined;
}

function literalNumber(n: Node | undefined): number | undefined {
  const v = unwrap(n);
  return v?.type === 'Literal' && typeof v.value === 'number' && Number.isFinite(v.value) ? v.value : undefined;
}

/** A number the caller writes: a literal, arithmetic of numbers, or a const of its scopes or its module holding one. */
function numberIn(program: TSESTree.Program, path: Node[], node: Node, depth: number): number | undefined {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return undefined;
  if (n.type === 'Literal') return literalNumber(n);
  if (n.type === 'BinaryExpression' && ['*', '+', '-', '/'].includes(n.operator)) {
    const a = numberIn(program, path, n.left as Node, depth + 1);
    const b = numberIn(program, path, n.right, depth + 1);
    if (a === undefined || b === undefined) return undefined;
    return n.operator === '*' ? a * b : n.operator === '+' ? a + b : n.operator === '-' ? a - b : b === 0 ? undefined : a / b;
  }
  if (n.type === 'Identifier') {
    const init = localConst(program, path, n.name);
    return init ? numberIn(program, path, init, depth + 1) : undefined;
  }
  if (n.type === 'MemberExpression' && !n.computed) {
    // A property of a const object literal: `LEASE.ms`.
    const object = unwrap(n.object);
    const base = object?.type === 'Identifier' ? localConst(program, path, object.name) : undefined;
    const key = propertyName(n);
    if (base?.type !== 'ObjectExpression' || key === undefined) return undefined;
    const p = base.properties.find((q) => q.type === 'Property' && !q.computed && memberKeyName(q) === key) as TSESTree.Property | undefined;
    return p ? numberIn(program, path, p.value as Node, depth + 1) : undefined;
  }
  return undefined;
}

/**
 * The initializer of the one `const name = ...` the enclosing blocks (or the module) declare, the nearest first;
 * undefined when the nearest declaring block binds it otherwise (a `let`, a parameter, a pattern).
 */
function localConst(program: TSESTree.Program, path: Node[], name: string): Node | undefined {
  // A parameter of an enclosing function by that name: the caller's callers choose it.
  for (const p of path) if (isFunction(p) && p.params.some((q) => patternNames(q).some((id) => id.name === name))) return undefined;
  const scopes: Node[][] = [...path.filter((p): p is TSESTree.BlockStatement => p.type === 'BlockStatement').map((b) => b.body as Node[]).reverse(), program.body as Node[]];
  for (const body of scopes) {
    for (const statement of body) {
      const s = statement.type === 'ExportNamedDeclaration' && statement.declaration ? statement.declaration : statement;
      if (s.type !== 'VariableDeclaration') continue;
      for (const d of s.declarations) {
        if (d.id.type !== 'Identifier' || d.id.name !== name) continue;
        return s.kind === 'const' ? unwrap(d.init as Node | null) : undefined;
      }
    }
  }
  return undefined;
}
