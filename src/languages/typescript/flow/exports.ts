// What a module of the project exports, read from its export statements
// after its walk: `export const pool = new Pool()`, `export default db`,
// `export { primaryPool as pool }`, re-exports (`export { db } from './db'`,
// `export * from './pool'`), CommonJS `module.exports = { pool }` (or a
// const of the module bound to that object: `const api = { pool };
// module.exports = api`) and `exports.pool = ...`, and exported type aliases
// (`export type Db = typeof db`).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { memberInit, unfrozen } from '../strings.ts';
import { isFunction, propertyName, span, unwrap, type Node } from '../syntax.ts';
import type { TypeMeaning, Value } from './types.ts';

/** What reading a module's exports needs of the module (flow/file.ts's TsFile). */
export interface ExportingModule {
  readonly program: TSESTree.Program;
  /** A module-level name's value after the module's walk. */
  moduleBinding(name: string): Value | undefined;
  /** The value of an expression at module level, after the walk. */
  moduleValue(node: Node): Value | undefined;
  /** The module of the project a specifier names, when it may be read. */
  module(specifier: string): ExportingModule | undefined;
  /** A value of another module as this one holds it. */
  adopt(value: Value | undefined, from: ExportingModule, at: { start: number; end: number }): Value | undefined;
  namespace(): Value;
  exported(name: string): Value | undefined;
}

const exportedName = (n: TSESTree.Identifier | TSESTree.StringLiteral) => (n.type === 'Identifier' ? n.name : String(n.value));

/** `module.exports`, `module.exports.x`, `exports.x`: the exported name ('module.exports' for the whole). */
export function commonJsTarget(left: Node): string | undefined {
  if (left.type !== 'MemberExpression') return undefined;
  const object = unwrap(left.object);
  const name = propertyName(left);
  if (object?.type === 'Identifier' && object.name === 'module' && name === 'exports') return 'module.exports';
  if (object?.type === 'Identifier' && object.name === 'exports' && name) return name;
  if (object?.type === 'MemberExpression' && commonJsTarget(object) === 'module.exports' && name) return name;
  return undefined;
}

/**
 * The object literal `module.exports = right` exports member by member: `{ claim, finish }`, or a
 * module-level const bound to one (`const queries = { claim: '...' }; module.exports = queries`),
 * either frozen (`Object.freeze(...)`).
 */
export function commonJsObject(program: TSESTree.Program, right: Node): TSESTree.ObjectExpression | undefined {
  let n = unfrozen(right);
  if (n?.type === 'Identifier') n = unfrozen(moduleConstant(program, n.name));
  return n?.type === 'ObjectExpression' ? n : undefined;
}

/** The initializer of the module's top-level `const name = ...` (exported or not). */
function moduleConstant(program: TSESTree.Program, name: string): Node | undefined {
  for (const statement of program.body) {
    const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (d?.type !== 'VariableDeclaration' || d.kind !== 'const') continue;
    for (const declarator of d.declarations) if (declarator.id.type === 'Identifier' && declarator.id.name === name) return declarator.init ?? undefined;
  }
  return undefined;
}

/** The value `file` exports as `name`, or undefined. */
export function readExport(file: ExportingModule, name: string): Value | undefined {
  const stars: TSESTree.ExportAllDeclaration[] = [];
  let commonJs: Node | undefined;
  for (const statement of file.program.body) {
    switch (statement.type) {
      case 'ExportNamedDeclaration': {
        const d = statement.declaration;
        if (d?.type === 'VariableDeclaration') {
          for (const declarator of d.declarations) if (declarator.id.type === 'Identifier' && declarator.id.name === name) return file.moduleBinding(name);
        } else if (d?.type === 'FunctionDeclaration' && d.id?.name === name) {
          return file.moduleBinding(name);
        }
        for (const s of statement.specifiers) {
          if (s.type !== 'ExportSpecifier' || exportedName(s.exported) !== name) continue;
          const local = exportedName(s.local);
          if (!statement.source) return file.moduleBinding(local);
          const module = file.module(String(statement.source.value));
          return module ? file.adopt(module.exported(local), module, span(statement.source)) : undefined;
        }
        break;
      }
      case 'ExportDefaultDeclaration': {
        if (name !== 'default') break;
        const d = statement.declaration as Node;
        if (d.type === 'Identifier') return file.moduleBinding(d.name);
        if ((d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration') && d.id) return file.moduleBinding(d.id.name);
        if (isFunction(d)) return file.moduleValue(d);
        return file.moduleValue(d);
      }
      case 'ExportAllDeclaration':
        if (statement.exported) {
          if (exportedName(statement.exported) !== name) break;
          const module = file.module(String(statement.source.value));
          return module ? file.adopt(module.namespace(), module, span(statement.source)) : undefined;
        }
        stars.push(statement);
        break;
      case 'ExpressionStatement': {
        const e = statement.expression;
        if (e.type !== 'AssignmentExpression' || e.operator !== '=') break;
        const target = commonJsTarget(e.left);
        if (target === 'module.exports') commonJs = unwrap(e.right);
        else if (target === name) return file.moduleValue(e.right);
        break;
      }
      case 'TSExportAssignment':
        // `export = pool`
        commonJs = unwrap(statement.expression);
        break;
      default:
        break;
    }
  }
  if (commonJs) {
    if (commonJs.type === 'ObjectExpression') {
      if (name === 'module.exports') return file.namespace();
    } else if (name === 'module.exports' || name === 'default') {
      return file.moduleValue(commonJs);
    }
    // `module.exports = { pool }`, or `= api` where `const api = { pool }`: its member.
    for (const p of commonJsObject(file.program, commonJs)?.properties ?? []) {
      if (p.type !== 'Property' || p.computed) continue;
      const key = p.key.type === 'Identifier' ? p.key.name : p.key.type === 'Literal' ? String(p.key.value) : undefined;
      if (key === name) return file.moduleValue(p.value as Node);
    }
  }
  if (name === 'module.exports') return file.namespace();
  if (name === 'default') return undefined;
  for (const star of stars) {
    const module = file.module(String(star.source.value));
    const value = module ? file.adopt(module.exported(name), module, span(star.source)) : undefined;
    if (value) return value;
  }
  return undefined;
}

/** What a type the module exports stands for: `export type Db = typeof db`, `export type Tx = Knex.Transaction`. */
export function readExportedType<M extends ExportingModule>(
  file: M,
  name: string,
  meaningOf: (file: M, type: TSESTree.TypeNode) => TypeMeaning | Value | undefined,
  classMeaning?: (file: M, cls: TSESTree.ClassDeclaration) => Value | undefined,
): TypeMeaning | Value | undefined {
  for (const statement of file.program.body) {
    const d = statement.type === 'ExportNamedDeclaration' ? statement.declaration : undefined;
    if (d?.type === 'TSTypeAliasDeclaration' && d.id.name === name) return meaningOf(file, d.typeAnnotation);
    // export class DbService extends PrismaClient {}: the class as a type.
    if (d?.type === 'ClassDeclaration' && d.id?.name === name) return classMeaning?.(file, d);
    if (statement.type === 'ExportNamedDeclaration' && !statement.declaration) {
      for (const s of statement.specifiers) {
        if (s.type !== 'ExportSpecifier' || exportedName(s.exported) !== name) continue;
        const local = exportedName(s.local);
        if (statement.source) {
          const module = file.module(String(statement.source.value)) as M | undefined;
          return module ? readExportedType(module, local, meaningOf, classMeaning) : undefined;
        }
        for (const other of file.program.body) {
          const alias = other.type === 'ExportNamedDeclaration' ? other.declaration : other;
          if (alias?.type === 'TSTypeAliasDeclaration' && alias.id.name === local) return meaningOf(file, alias.typeAnnotation);
        }
      }
    }
  }
  return undefined;
}

/**
 * What a module exports as `name` other than by `export const`: its default export's value (`export default {
 * ... }`, `export default QUERIES`), and CommonJS `module.exports = { NAME: ... }` (or `= QUERIES` where
 * `const QUERIES = { NAME: ... }`), `exports.NAME = ...`.
 */
export function moduleLevelExport(program: TSESTree.Program, name: string): Node | undefined {
  for (const statement of program.body) {
    if (statement.type === 'ExportDefaultDeclaration' && name === 'default') {
      const d = statement.declaration;
      return d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration' || d.type === 'TSDeclareFunction' ? undefined : (d as Node);
    }
    if (statement.type !== 'ExpressionStatement' || statement.expression.type !== 'AssignmentExpression' || statement.expression.operator !== '=') continue;
    const { left, right } = statement.expression;
    const target = commonJsTarget(left as Node);
    if (target === name) return right as Node;
    if (target === 'module.exports') {
      const value = memberInit(commonJsObject(program, right as Node), name);
      if (value) return value;
    }
  }
  return undefined;
}

