// The prefilter's second chance. A file with no trigger may still send SQL
// that is written elsewhere: a constant it imports from a module of the
// project (`from app.queries import SET_TENANT`, `import { SET_TENANT } from
// './queries'`), which the front ends read there. Such a file is held back
// while the scan reads the rest, then analysed when a name it imports comes
// from a module that passes the prefilter itself, directly or through
// re-exports (`from app.queries import SET_TENANT` in app/sql.py, `export {
// SET_TENANT } from './queries'`, `export * from './queries'`). The constant may
// be read through the module or object it is imported with too: `import * as
// q` / `const q = require()` / a default export then `q.SET_TENANT`, Python
// `from app import queries`, `import app.queries as q` then `q.SET_TENANT`, or
// a class of constants (`from app.sql import Q` then `Q.SET_TENANT`).
//
// The decision reads the imports as text (no parse: most files held back are
// dropped again) and depends only on the files on disk, never on the order
// they were read in or on the workers: a module's verdict is its own bytes
// through the prefilter. The modules a decision read are returned with it, so
// the cache keeps a file's verdict only while they are unchanged.
import { dirname } from 'node:path';
import { languageOf } from '../languages/extensions.ts';
import { resolveModule } from '../languages/python/flow/module-paths.ts';
import { resolveProjectModule } from '../languages/typescript/flow/modules.ts';
import type { Language } from '../model/index.ts';
import { asUtf8, readRegularFile, SOURCE_MAX_BYTES } from '../read-file.ts';
import type { FileAnalysis } from './analysis.ts';

/** A name a file imports: from which module (a path once resolved) and under which name there. */
interface ImportedName {
  /** The TS/JS specifier, or the Python module with its leading dots counted in `level`. */
  module: string;
  level: number;
  name: string;
  /** The name it is bound to in the importing file. */
  local: string;
  /**
   * `whole`: the local name is the module itself (`import * as q`, `require()`, `import app.queries as q`),
   * `default`: its default export; `attribute`: a class `name` of the module holds it (`Q.SET_TENANT`).
   */
  kind?: 'whole' | 'default';
  attribute?: string;
  /** Python: a function of the module the file calls with names or with nothing (the front end walks it at the call). */
  called?: true;
}

/** How far re-exports are followed (the front ends follow as far, or less). */
const MAX_REEXPORTS = 2;

export interface SecondChance {
  /** Analyse the file after all: a name it imports comes from a module that passed. */
  analyse: boolean;
  /** The modules the decision read: it holds while they are unchanged. */
  dependencies: string[];
}

export class ImportChance {
  /** Files held back, by path: the names they import. */
  private readonly held = new Map<string, { language: Language; names: ImportedName[] }>();
  /** Each module's verdict: its bytes passed the prefilter. */
  private readonly passes = new Map<string, boolean>();
  /** Modules read for their re-exports, by path (null: unreadable). */
  private readonly texts = new Map<string, string | null>();
  private readonly resolved = new Map<string, string | null>();

  constructor(private readonly prefilter: (bytes: Uint8Array, language: Language) => boolean) {}

  /** What the prefilter said of a file the scan read: a module's verdict, without reading it again. */
  saw(file: string, passed: boolean): void {
    this.passes.set(file, passed);
  }

  /**
   * Holds back a file the prefilter dropped when it imports names from modules that may be the
   * project's; false when it imports none (it is dropped now, as before).
   */
  hold(file: string, bytes: Uint8Array, language: Language): boolean {
    if (language !== 'python' && language !== 'typescript') return false;
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buffer.indexOf('import') < 0 && (language === 'python' || buffer.indexOf('require') < 0)) return false;
    const text = buffer.toString('latin1');
    const { names, statements } = language === 'python' ? pythonImports(text) : tsImports(text);
    if (names.length === 0) return false;
    // Only a name the file hands on as a value (a call's argument, an assignment, a template's
    // interpolation) can be SQL text it sends: not one it only calls or reads a member of (a pool).
    const locals = usedAsValues(text, new Set(names.map((n) => n.local)), statements);
    const used = names.flatMap((n) => lookups(n, locals.get(n.local), language));
    // Python: a function of a project module called with arguments runs its SQL on what the file hands it.
    if (language === 'python') {
      const calls = calledWithArguments(text, new Set(names.map((n) => n.local)), statements);
      for (const n of names) used.push(...lookups(n, calls.get(n.local), language).map((l): ImportedName => ({ ...l, called: true })));
      // `job_model = Job` in a class body, then `self.job_model.take()`: a function of the class Job.
      const held = classAttributeCalls(text, new Set(names.map((n) => n.local)));
      for (const n of names) used.push(...lookups(n, held.get(n.local), language).filter((l) => l.attribute !== undefined).map((l): ImportedName => ({ ...l, called: true })));
    }
    if (used.length === 0) return false;
    this.held.set(file, { language, names: used });
    return true;
  }

  /** The verdict on a held file, once every file of the scan was read. */
  verdict(file: string): SecondChance {
    const held = this.held.get(file);
    const dependencies = new Set<string>();
    const analyse = !!held && held.names.some((imported) => this.reaches(file, held.language, imported, 0, dependencies));
    return { analyse, dependencies: [...dependencies].sort() };
  }

  /**
   * The name is a module-level constant of a module that passes the prefilter, there or at most
   * MAX_REEXPORTS re-exports away (a function or a class it imports is not SQL text the front ends read).
   */
  private reaches(from: string, language: Language, imported: ImportedName, depth: number, dependencies: Set<string>): boolean {
    const path = this.resolve(from, language, imported);
    if (!path) return false;
    dependencies.add(path);
    const text = this.textOf(path);
    if (text === undefined) return false;
    if (imported.attribute !== undefined) {
      // `Job.take()`: a function of the class; `Q.SET_TENANT`: a constant of it.
      const defines = imported.called ? definesClassFunction : definesClassConstant;
      return defines(text, imported.name, imported.attribute) && this.passesPrefilter(path);
    }
    if (imported.called) return definesFunction(text, imported.name) && this.passesPrefilter(path);
    if (definesConstant(text, language, imported.name)) return this.passesPrefilter(path);
    if (depth >= MAX_REEXPORTS) return false;
    const next = language === 'python' ? pythonImports(text).names.filter((n) => n.local === imported.name) : tsReexports(text, imported.name);
    return next.some((n) => this.reaches(path, language, n, depth + 1, dependencies));
  }

  private resolve(from: string, language: Language, imported: ImportedName): string | undefined {
    // Python resolves by the importing file's folder; TS/JS too (its paths config is per folder).
    const key = `${language === 'python' ? 'p' : 't'}\0${dirname(from)}\0${imported.level}\0${imported.module}`;
    let path = this.resolved.get(key);
    if (path === undefined) {
      path = (language === 'python' ? resolveModule(from, imported.module, imported.level) : resolveProjectModule(from, imported.module)) ?? null;
      // A module that resolves to the importing file itself is looked for again from it, unshared.
      if (path === from) return language === 'python' ? resolveModule(from, imported.module, imported.level) : undefined;
      this.resolved.set(key, path);
    }
    return path ?? undefined;
  }

  private passesPrefilter(path: string): boolean {
    let passed = this.passes.get(path);
    if (passed === undefined) {
      const language = languageOf(path);
      const text = this.textOf(path);
      passed = !!language && text !== undefined && this.prefilter(Buffer.from(text, 'latin1'), language);
      this.passes.set(path, passed);
    }
    return passed;
  }

  private textOf(path: string): string | undefined {
    let text = this.texts.get(path);
    if (text === undefined) {
      try {
        text = Buffer.from(asUtf8(readRegularFile(path, SOURCE_MAX_BYTES))).toString('latin1');
      } catch {
        text = null;
      }
      this.texts.set(path, text);
    }
    return text ?? undefined;
  }
}

type Statements = [start: number, end: number][];

/** A second-chance file's analysis holds while the modules that gave it its chance are unchanged too. */
export function withDependencies(analysis: FileAnalysis, reached: readonly string[] | undefined): FileAnalysis {
  if (!reached || reached.length === 0) return analysis;
  return { ...analysis, dependencies: [...new Set([...(analysis.dependencies ?? []), ...reached])].sort() };
}

// The statements' patterns, each tried only at the start of a line that opens with its keyword: the same matches
// as `/^[ \t]*from.../gm` over the text, without a multiline regex testing every character for a line's start.
const FROM_LINE = /[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)/y;
const IMPORT_LINE = /[ \t]*import[ \t]+([^\n;#]*)/y;

/** After a line terminator as a multiline regex's `^` reads one (\n, \r, U+2028, U+2029). */
const isLineBreak = (code: number) => code === 10 || code === 13 || code === 0x2028 || code === 0x2029;

/**
 * The matches of `pattern` (sticky, starting with `[ \t]*` then `word`) at the starts of lines whose first word is
 * `word`, in order and not overlapping: what `text.matchAll(/^<pattern>/gm)` finds, found by `indexOf`.
 */
function keywordLineMatches(text: string, word: string, pattern: RegExp): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  let end = 0;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    let k = at - 1;
    while (k >= 0 && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k--;
    const start = k + 1;
    if ((k >= 0 && !isLineBreak(text.charCodeAt(k))) || start < end) continue;
    pattern.lastIndex = start;
    const match = pattern.exec(text);
    if (!match) continue;
    out.push(match);
    end = start + match[0].length;
  }
  return out;
}

/** `from <module> import a, b as c` and `from . import (a, b)`: each imported name with the name it is bound to. */
export function pythonImports(text: string): { names: ImportedName[]; statements: Statements } {
  const out: ImportedName[] = [];
  const statements: Statements = [];
  for (const match of keywordLineMatches(text, 'from', FROM_LINE)) {
    const [, dots, module, list] = match;
    statements.push([match.index, match.index + match[0].length]);
    if (!module && !dots) continue;
    for (const part of list.replace(/[()]/g, '').split(',')) {
      const words = part.replace(/#[^\n]*/g, '').trim().split(/\s+/);
      const name = words[0];
      if (!name || !/^\w+$/.test(name) || name === '*') continue;
      out.push({ module, level: dots.length, name, local: words[1] === 'as' && words[2] ? words[2] : name });
    }
  }
  // `import app.queries as q`, `import app.queries`: the module itself, under its name or its first part's.
  for (const match of keywordLineMatches(text, 'import', IMPORT_LINE)) {
    statements.push([match.index, match.index + match[0].length]);
    for (const part of match[1].replace(/[()]/g, '').split(',')) {
      const words = part.trim().split(/\s+/);
      if (!words[0] || !/^[\w.]+$/.test(words[0])) continue;
      const alias = words[1] === 'as' && words[2] ? words[2] : undefined;
      out.push({ module: alias ? words[0] : words[0].split('.')[0], level: 0, name: '', local: alias ?? words[0].split('.')[0], kind: 'whole' });
    }
  }
  return { names: out, statements };
}

/** `import { a, b as c } from './x'` (with a default import before it or not; type-only imports left out), `const { a, b: c } = require('./x')`. */
export function tsImports(text: string): { names: ImportedName[]; statements: Statements } {
  const out: ImportedName[] = [];
  const statements: Statements = [];
  for (const match of text.matchAll(/\bimport\s+(?!type\s*[{\w])(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*(['"])([^'"\n]+)\2/g)) {
    statements.push([match.index, match.index + match[0].length]);
    for (const { name, local } of specifierList(match[1])) out.push({ module: match[3], level: 0, name, local });
  }
  // `const { a, b: c } = require('./x')`: each name, as an import by name.
  for (const match of text.matchAll(/\b(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\(\s*(['"])([^'"\n]+)\2\s*\)/g)) {
    statements.push([match.index, match.index + match[0].length]);
    for (const { name, local } of specifierList(match[1].replace(/:/g, ' as '))) out.push({ module: match[3], level: 0, name, local });
  }
  // `import q from`, `import * as q from`, `import q = require()`, `const q = require()`: the module or its default export.
  const whole = /\bimport\s+(?!type\s)(?:([\w$]+)\s*,?\s*)?(?:\*\s*as\s+([\w$]+)\s*)?(?:\{[^}]*\}\s*)?from\s*(['"])([^'"\n]+)\3|\b(?:import|const|let|var)\s+([\w$]+)\s*=\s*require\(\s*(['"])([^'"\n]+)\6\s*\)/g;
  for (const match of text.matchAll(whole)) {
    const [, defaultLocal, namespace, , from, required, , requiredFrom] = match;
    if (!defaultLocal && !namespace && !required) continue;
    statements.push([match.index, match.index + match[0].length]);
    if (defaultLocal && defaultLocal !== 'type') out.push({ module: from, level: 0, name: 'default', local: defaultLocal, kind: 'default' });
    if (namespace) out.push({ module: from, level: 0, name: '', local: namespace, kind: 'whole' });
    if (required) out.push({ module: requiredFrom, level: 0, name: '', local: required, kind: 'whole' });
  }
  return { names: out, statements };
}

/** Where a module re-exports `name` from: `export { a as name } from './x'`, `export * from './x'`. */
function tsReexports(text: string, name: string): ImportedName[] {
  const out: ImportedName[] = [];
  for (const match of text.matchAll(/\bexport\s*(?:\{([^}]*)\}|\*)\s*from\s*(['"])([^'"\n]+)\2/g)) {
    if (match[1] === undefined) out.push({ module: match[3], level: 0, name, local: name });
    else for (const s of specifierList(match[1])) if (s.local === name) out.push({ module: match[3], level: 0, name: s.name, local: name });
  }
  return out;
}

/** `a, b as c, type d`: each name and what it is called on the other side (type-only ones left out). */
function specifierList(list: string): { name: string; local: string }[] {
  const out: { name: string; local: string }[] = [];
  for (const part of list.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, '').split(',')) {
    const words = part.trim().split(/\s+/);
    if (!words[0] || words[0] === 'type') continue;
    if (!/^[\w$]+$/.test(words[0])) continue;
    out.push({ name: words[0], local: words[1] === 'as' && words[2] ? words[2] : words[0] });
  }
  return out;
}

const escaped = (name: string) => name.replace(/\$/g, '\\$');

/**
 * Which of the names stand where a value is handed on, outside the import statements: after `(`, `,`,
 * `=`, `:`, `+`, `[`, `{`, `${`, `?`, `>`, `|`, `&` or `return`. One pass over the text for them all.
 */
function usedAsValues(text: string, names: ReadonlySet<string>, statements: Statements): Map<string, Set<string>> {
  // Each name handed on, with the properties read from it there (`q.SET_TENANT`: 'SET_TENANT'; '' when none).
  const used = new Map<string, Set<string>>();
  // The names first (a literal alternation is quick to look for), then what stands before each.
  const pattern = new RegExp(`(?<![\\w$])(?:${[...names].map(escaped).join('|')})(?![\\w$])`, 'g');
  for (const match of text.matchAll(pattern)) {
    let k = match.index - 1;
    while (k >= 0 && (text[k] === ' ' || text[k] === '\t' || text[k] === '\n' || text[k] === '\r')) k--;
    const before = text[k];
    const handedOn = before !== undefined && ('(,=:+[{?>|&'.includes(before) || (before === 'n' && /(?<![\w$])return$/.test(text.slice(Math.max(0, k - 6), k + 1))));
    if (!handedOn || statements.some(([start, end]) => start <= match.index && match.index <= end)) continue;
    const end = match.index + match[0].length;
    let chain = text[end] === '.' ? (/^(?:\.[\w$]+){1,4}/.exec(text.slice(end, end + 200))?.[0] ?? '') : '';
    // A method called on it (`q.build(...)`) hands on what the call returns, no constant.
    if (chain && /^\s*\(/.test(text.slice(end + chain.length, end + chain.length + 20))) chain = '';
    let chains = used.get(match[0]);
    if (!chains) used.set(match[0], (chains = new Set()));
    chains.add(chain.slice(1));
  }
  return used;
}

/**
 * Python names called outside the import statements with a name among their arguments (`claim(conn, ...)`,
 * `jobs.claim(conn)`) or with none (`claim()`), with the function read from each (`jobs.claim(`: 'claim'; '' when the name itself is
 * called). Arguments are read one level of parentheses deep.
 */
function calledWithArguments(text: string, names: ReadonlySet<string>, statements: Statements): Map<string, Set<string>> {
  const called = new Map<string, Set<string>>();
  const pattern = new RegExp(`(?<![\\w.])(${[...names].map(escaped).join('|')})((?:\\.\\w+)?)[ \\t]*\\(((?:[^()]|\\([^()]*\\)){0,300})\\)`, 'g');
  for (const match of text.matchAll(pattern)) {
    if (statements.some(([start, end]) => start <= match.index && match.index <= end)) continue;
    // Only a name can be a connection the file holds (`claim(conn, 5)`, `claim(self.db)`): not `build(1)`. A call
    // with no argument (`take_next()`) may run on the thread's connection (Django's), in the caller's transaction.
    if (match[3].trim() !== '' && !match[3].split(',').some((arg) => /^\s*(?:\w+=)?[A-Za-z_][\w.]*\s*$/.test(arg))) continue;
    let chains = called.get(match[1]);
    if (!chains) called.set(match[1], (chains = new Set()));
    chains.add(match[2].slice(1));
  }
  return called;
}

/**
 * Imported names a class body binds to an attribute (`    job_model = Job`), with the functions called through that
 * attribute (`self.job_model.take(`, `cls.job_model.take(`), by the imported name.
 */
function classAttributeCalls(text: string, names: ReadonlySet<string>): Map<string, Set<string>> {
  const held = new Map<string, Set<string>>();
  for (const match of bindingLines(text, names)) {
    if (!names.has(match[2])) continue;
    for (const call of text.matchAll(new RegExp(`(?<![\\w.])(?:self|cls)\\.${escaped(match[1])}\\.(\\w+)[ \\t]*\\(`, 'g'))) {
      let methods = held.get(match[2]);
      if (!methods) held.set(match[2], (methods = new Set()));
      methods.add(call[1]);
    }
  }
  return held;
}

const BINDING_LINE = /[ \t]+(\w+)[ \t]*=[ \t]*(\w+)[ \t]*(?:#.*)?$/my;
/** A binding line's end, from its `=` on: found quicker than its start (a regex starting with `^` tests every character). */
const BINDING_END = /=[ \t]*(\w+)[ \t]*(?:#.*)?$/gm;

/**
 * The matches of `/^[ \t]+(\w+)[ \t]*=[ \t]*(\w+)[ \t]*(?:#.*)?$/gm` that bind one of the names, in order. Such a
 * line's first `=` starts a match of BINDING_END (no earlier one reaches past a line's end), which names its value;
 * the line is then read from its start.
 */
function bindingLines(text: string, names: ReadonlySet<string>): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  for (const end of text.matchAll(BINDING_END)) {
    if (!names.has(end[1])) continue;
    let start = end.index;
    while (start > 0 && !isLineBreak(text.charCodeAt(start - 1))) start--;
    BINDING_LINE.lastIndex = start;
    const match = BINDING_LINE.exec(text);
    if (match && names.has(match[2])) out.push(match);
  }
  return out;
}

/** A top-level `def name(` or `async def name(` of a Python module. */
function definesFunction(text: string, name: string): boolean {
  return new RegExp(`^(?:async[ \\t]+)?def[ \\t]+${escaped(name)}[ \\t]*\\(`, 'm').test(text);
}

/**
 * What to look for in other modules for a name handed on with the properties read from it (`chains`): the
 * name itself when it was imported by name (as before), the module's member when it is the module, the
 * default export when it is that, and for Python a module or a class of constants named by the chain.
 */
function lookups(imported: ImportedName, chains: ReadonlySet<string> | undefined, language: Language): ImportedName[] {
  if (!chains) return [];
  if (!imported.kind && language !== 'python') return [imported];
  const out: ImportedName[] = imported.kind ? [] : [imported];
  for (const chain of chains) {
    if (!chain) continue;
    const parts = chain.split('.');
    const last = parts[parts.length - 1];
    if (imported.kind === 'default') return [imported];
    if (language !== 'python') {
      out.push({ ...imported, name: parts[0], kind: undefined });
      continue;
    }
    // Python: the dotted path before the last part names a module (`queries.X`, `app.queries.X`), or the
    // part before it a class of the module before that (`Q.X`).
    const head = imported.kind ? [imported.module] : [imported.module, imported.name].filter((m) => m);
    const path = [...head, ...parts.slice(0, -1)];
    out.push({ ...imported, module: path.join('.'), name: last, kind: undefined });
    if (path.length > 1 || imported.level > 0) {
      out.push({ ...imported, module: path.slice(0, -1).join('.'), name: path[path.length - 1], attribute: last, kind: undefined });
    }
  }
  return out;
}

/** A top-level `class Q` of the module assigns `attribute` in a body's line (`    SET_TENANT = ...`). */
function definesClassConstant(text: string, name: string, attribute: string): boolean {
  return new RegExp(`^class[ \\t]+${escaped(name)}\\b`, 'm').test(text) && new RegExp(`^[ \\t]+${escaped(attribute)}[ \\t]*(?::[^=\\n]*)?=(?!=)`, 'm').test(text);
}

/** A top-level `class Q` of the module defines `attribute` as a function in its body (`    def take(`). */
function definesClassFunction(text: string, name: string, attribute: string): boolean {
  return new RegExp(`^class[ \\t]+${escaped(name)}\\b`, 'm').test(text) && new RegExp(`^[ \\t]+(?:async[ \\t]+)?def[ \\t]+${escaped(attribute)}[ \\t]*\\(`, 'm').test(text);
}

/** `Object.freeze(` before an object: the same object, frozen. */
const FROZEN = String.raw`(?:Object\.freeze\(\s*)?`;

/**
 * `module.exports = queries` (or `Object.freeze(queries)`) where `const queries = { NAME: ..., }` before
 * it has the key (or the shorthand `{ NAME }`): looked for between the const and the assignment.
 */
function exportedObjectHas(text: string, id: string): boolean {
  for (const assignment of text.matchAll(new RegExp(String.raw`\bmodule\.exports\s*=\s*${FROZEN}([\w$]+)\s*\)?\s*(?:;|$)`, 'gm'))) {
    const object = new RegExp(String.raw`\bconst\s+${escaped(assignment[1])}\s*(?::[^=]*?)?=\s*${FROZEN}\{`).exec(text.slice(0, assignment.index));
    if (!object) continue;
    const body = text.slice(object.index + object[0].length, assignment.index);
    if (new RegExp(String.raw`(?<![\w$.])(?:${id}|'${id}'|"${id}")\s*:|(?<![\w$.])${id}\s*[,}]`).test(body)) return true;
  }
  return false;
}

/**
 * The module binds `name` at its top level as the front ends read a constant: Python `NAME = value`
 * at the start of a line, TS/JS `const NAME = value` whose value is no function or class.
 */
function definesConstant(text: string, language: Language, name: string): boolean {
  const id = escaped(name);
  if (language === 'python') return new RegExp(`^${id}[ \\t]*(?::[^=\\n]*)?=(?!=)`, 'm').test(text);
  // The default export as a value (`export default { ... }`, `export default QUERIES`), CommonJS exports.
  if (name === 'default') return /\bexport\s+default\s+(?!function\b|class\b|async\b|abstract\b)[{\w$'"`]/.test(text);
  if (new RegExp(`\\bexports\\.${id}\\s*=(?!=)|\\bmodule\\.exports\\s*=\\s*${FROZEN}\\{[^;]*?(?<![\\w$])${id}\\s*[:,}]`).test(text)) return true;
  if (exportedObjectHas(text, id)) return true;
  const match = new RegExp(`\\bconst\\s+${id}\\s*(?::[^=]*?)?=(?![=>])\\s*(\\S*)`).exec(text);
  return !!match && !/^(async\b|function\b|class\b|new\b|\((?!\s*['"`]))/.test(match[1]) && !new RegExp(`^[\\w$]+\\s*=>`).test(text.slice(match.index + match[0].length - match[1].length));
}
