// Functions a driver's own runner calls: Knex's `migrate:latest` requires
// each migration and calls its exported `up(knex)`. Such a file has no import
// or type that names the driver (`exports.up = async function (knex) { await
// knex.raw('create policy ...') }`), so the parameter is read from the
// contract: the export's name, and the driver's own members the body uses on
// it (drivers/<name>.ts `runnerExports`).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { DriverRegistry } from '../drivers/index.ts';
import { children, isFunction, propertyName, unwrap, type FunctionNode, type Node } from '../syntax.ts';
import { commonJsObject, commonJsTarget } from './exports.ts';
import type { Value } from './types.ts';

/** Each exported function's untyped first parameter that a driver's runner fills in, with its value. */
export function runnerParameters(program: TSESTree.Program, drivers: DriverRegistry): Map<Node, Value> {
  const out = new Map<Node, Value>();
  for (const [name, fn] of exportedFunctions(program)) {
    const param = fn.params[0];
    if (!drivers.runnerExportNames.has(name) || param?.type !== 'Identifier' || param.typeAnnotation) continue;
    const value = drivers.runnerParameter(name, membersUsedOn(fn.body, param.name));
    if (value) out.set(param, value);
  }
  return out;
}

/** `export function up`, `export const up = ...`, `exports.up = ...`, `module.exports = { up, down(knex) {} }` (or a const bound to it). */
function exportedFunctions(program: TSESTree.Program): [string, FunctionNode][] {
  const out: [string, FunctionNode][] = [];
  const add = (name: string | undefined, node: Node | null | undefined) => {
    const fn = unwrap(node);
    if (name && isFunction(fn)) out.push([name, fn]);
  };
  for (const statement of program.body) {
    if (statement.type === 'ExportNamedDeclaration') {
      const d = statement.declaration;
      if (d?.type === 'FunctionDeclaration') add(d.id?.name, d);
      if (d?.type === 'VariableDeclaration') for (const v of d.declarations) if (v.id.type === 'Identifier') add(v.id.name, v.init);
      continue;
    }
    if (statement.type !== 'ExpressionStatement' || statement.expression.type !== 'AssignmentExpression') continue;
    const { left, right } = statement.expression;
    const target = commonJsTarget(left);
    if (target !== 'module.exports') add(target, right);
    else {
      for (const p of commonJsObject(program, right)?.properties ?? []) if (p.type === 'Property' && !p.computed && p.key.type === 'Identifier') add(p.key.name, p.value as Node);
    }
  }
  return out;
}

/** The member names the code uses on `name`: `knex.raw(...)` and `knex.schema.createTable(...)` give raw and schema. */
function membersUsedOn(body: Node | null | undefined, name: string): Set<string> {
  const used = new Set<string>();
  const visit = (node: Node) => {
    if (node.type === 'MemberExpression' && unwrap(node.object)?.type === 'Identifier' && (unwrap(node.object) as TSESTree.Identifier).name === name) {
      const member = propertyName(node);
      if (member) used.add(member);
    }
    for (const child of children(node)) visit(child);
  };
  if (body) visit(body);
  return used;
}
