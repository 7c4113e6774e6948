// Modules of function declarations only (a layered service's controllers,
// services and repositories: imports, types, `export function` and nothing
// else at the top): what such a module exports as a function is that
// function, known from its syntax, and a function whose every `return` gives
// an object, array, literal or arithmetic returns no value a walk could tell
// (bindings.ts `value`), whatever its scope holds. An importer that asks only
// that (calls a controller for the object it answers with) needs no walk of
// the module, nor of the modules it imports: a handler four imports above the
// pool reads its controller without walking the chain below it (flow/file.ts
// `exported`, `returnsOf`).
//
// Why the walk would say the same: the module's names are its hoisted
// function declarations, bound before the walk starts (walk.ts `statements`),
// and nothing in it assigns to those names, so the binding the walk leaves is
// the one it starts with; a function's returns are recorded from `value` of
// each returned expression, which is undefined for these kinds of expression.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { children, isFunction, patternNames, unwrap, type FunctionNode, type Node } from '../syntax.ts';

/** Expression kinds `value` (bindings.ts) never gives a value for: nothing in scope changes that. */
const NEVER_A_VALUE = new Set(['ObjectExpression', 'ArrayExpression', 'Literal', 'TemplateLiteral', 'BinaryExpression', 'UnaryExpression', 'UpdateExpression']);

/** Per program: its exported top-level function declarations by name, or null when it is not a module of declarations only. */
const byProgram = new WeakMap<TSESTree.Program, Map<string, TSESTree.FunctionDeclaration> | null>();

/**
 * The exported function declarations of a module whose top level is imports, type declarations and
 * function declarations only (`export function`, `export async function`, or not exported), each
 * name declared once, no class and no `this` anywhere, and no assignment to any of those names.
 * Undefined for any other module.
 */
export function exportedDeclarations(program: TSESTree.Program): ReadonlyMap<string, TSESTree.FunctionDeclaration> | undefined {
  let found = byProgram.get(program);
  if (found === undefined) {
    found = readDeclarations(program) ?? null;
    byProgram.set(program, found);
  }
  return found ?? undefined;
}

function readDeclarations(program: TSESTree.Program): Map<string, TSESTree.FunctionDeclaration> | undefined {
  const declared = new Set<string>();
  const exported = new Map<string, TSESTree.FunctionDeclaration>();
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration' || statement.type === 'TSTypeAliasDeclaration' || statement.type === 'TSInterfaceDeclaration') continue;
    const isExport = statement.type === 'ExportNamedDeclaration';
    // `export { a }`, `export ... from`: the names are the walk's to say.
    if (isExport && (statement.source || statement.specifiers.length > 0)) return undefined;
    const d = isExport ? statement.declaration : statement;
    if (d?.type === 'TSTypeAliasDeclaration' || d?.type === 'TSInterfaceDeclaration') continue;
    if (d?.type !== 'FunctionDeclaration' || !d.id || declared.has(d.id.name)) return undefined;
    declared.add(d.id.name);
    if (isExport) exported.set(d.id.name, d);
  }
  let plain = true;
  const visit = (node: Node) => {
    if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression' || node.type === 'ThisExpression') plain = false;
    else if (node.type === 'AssignmentExpression' || node.type === 'UpdateExpression') {
      const target = node.type === 'AssignmentExpression' ? node.left : node.argument;
      if (patternNames(target).some((id) => declared.has(id.name))) plain = false;
    }
    if (plain) for (const child of children(node)) visit(child);
  };
  visit(program);
  return plain ? exported : undefined;
}

/** returnsNoValue's answers: a declaration is asked at each call of it, from every file that calls it. */
const noValue = new WeakMap<TSESTree.FunctionDeclaration, boolean>();

/** Whether every `return` of `fn` itself (not of a function inside it) gives nothing, or an expression `value` never reads. */
export function returnsNoValue(fn: TSESTree.FunctionDeclaration): boolean {
  let none = noValue.get(fn);
  if (none === undefined) noValue.set(fn, (none = readsNoValue(fn)));
  return none;
}

function readsNoValue(fn: TSESTree.FunctionDeclaration): boolean {
  let none = true;
  const visit = (node: Node) => {
    if (node.type === 'ReturnStatement' && node.argument) {
      const returned = unwrap(node.argument);
      if (!returned || !NEVER_A_VALUE.has(returned.type)) none = false;
    }
    if (none) for (const child of children(node)) if (!isFunction(child)) visit(child);
  };
  if (fn.body) visit(fn.body);
  return none;
}

/** Whether `fn` is one of the exported declarations of a module of declarations only (`exportedDeclarations`). */
export function declaredExport(program: TSESTree.Program, fn: FunctionNode): fn is TSESTree.FunctionDeclaration {
  return fn.type === 'FunctionDeclaration' && fn.id !== null && exportedDeclarations(program)?.get(fn.id.name) === fn;
}

/**
 * Whether a file that imports this module is unlikely to walk it: its top level is imports, types
 * and function declarations, and every exported one returns no value a walk could tell, so an
 * importer reads each export from its syntax alone (`exported`, `returnsOf` in flow/file.ts). Read
 * from the top level and the exported functions' returns only: a module it says yes to wrongly
 * (a class inside, an assignment to a declared name) is walked as before, only not kept for it.
 */
export function importedWithoutWalk(program: TSESTree.Program): boolean {
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration' || statement.type === 'TSTypeAliasDeclaration' || statement.type === 'TSInterfaceDeclaration') continue;
    const isExport = statement.type === 'ExportNamedDeclaration';
    if (isExport && (statement.source || statement.specifiers.length > 0)) return false;
    const d = isExport ? statement.declaration : statement;
    if (d?.type === 'TSTypeAliasDeclaration' || d?.type === 'TSInterfaceDeclaration') continue;
    if (d?.type !== 'FunctionDeclaration' || !d.id) return false;
    if (isExport && !returnsNoValue(d)) return false;
  }
  return true;
}
