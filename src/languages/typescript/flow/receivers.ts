// What the code around a query says about the receiver it is sent on, where
// the walk holds no value for that receiver (a constructor parameter of a
// type the scan cannot read, `const db = await getConnection()` of a module
// it cannot read): how the receiver's name is bound, whether a
// dependency-injection container fills it, and whether the query runs inside
// the callback of a transaction that very receiver opened
// (`db.transaction(async (tx) => { await db.execute(...) })`). Read from the
// syntax tree alone; the driver modules decide what it means for their
// library (drivers/conventions.ts).
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { dottedName, isFunction, pathTo, patternNames, propertyName, unwrap, type Call, type Node } from '../syntax.ts';

/**
 * How a receiver's name is bound where the query is:
 * - 'import': an import (a value its module made when it loaded);
 * - 'made': a local variable a call made (`const db = await getConnection(id)`, `new Client()`);
 * - 'injected': `this.x`, a constructor parameter a dependency-injection container fills;
 * - 'parameter': a parameter of a function around it (its caller chooses it);
 * - 'other': anything else (an assignment, a destructuring, a global).
 */
export type Bound = 'import' | 'made' | 'injected' | 'parameter' | 'other';

/** The declaration of `name` in the scopes of `path` (innermost first): how it is bound, and the index of the scope that binds it. */
function bindingIn(path: readonly Node[], name: string): { bound: Bound; at: number } | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const scope = path[i];
    if (isFunction(scope)) {
      if (scope.params.some((p) => patternNames(p.type === 'TSParameterProperty' ? p.parameter : p).some((id) => id.name === name))) return { bound: 'parameter', at: i };
      continue;
    }
    if (scope.type === 'CatchClause' && patternNames(scope.param).some((id) => id.name === name)) return { bound: 'other', at: i };
    const statements: readonly Node[] = scope.type === 'Program' || scope.type === 'BlockStatement' || scope.type === 'StaticBlock' ? scope.body : scope.type === 'SwitchCase' ? scope.consequent : [];
    for (const statement of statements) {
      const bound = declares(statement, name);
      if (bound) return { bound, at: i };
    }
    const head = scope.type === 'ForOfStatement' || scope.type === 'ForInStatement' ? scope.left : scope.type === 'ForStatement' ? scope.init : undefined;
    if (head && declares(head, name)) return { bound: 'other', at: i };
  }
  return undefined;
}

/** How a statement binds `name`, if it does. */
function declares(statement: Node, name: string): Bound | undefined {
  const s = statement.type === 'ExportNamedDeclaration' && statement.declaration ? statement.declaration : statement;
  if (s.type === 'ImportDeclaration') return s.specifiers.some((sp) => sp.local.name === name) ? 'import' : undefined;
  if (s.type === 'TSImportEqualsDeclaration') return s.id.name === name ? 'import' : undefined;
  if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration') && s.id?.name === name) return 'other';
  if (s.type !== 'VariableDeclaration') return undefined;
  for (const d of s.declarations) {
    if (!patternNames(d.id).some((id) => id.name === name)) continue;
    let init = unwrap(d.init);
    // CommonJS: `const { db } = require('./models')` imports as `import { db } from './models'` does.
    if (init?.type === 'CallExpression' && init.callee.type === 'Identifier' && init.callee.name === 'require' && init.arguments.length === 1) return 'import';
    if (init?.type === 'AwaitExpression') init = unwrap(init.argument);
    // `const trx = await knex.transaction()` made a transaction, not a database.
    const transaction = init?.type === 'CallExpression' && init.callee.type === 'MemberExpression' && propertyName(init.callee) === 'transaction';
    return d.id.type === 'Identifier' && (init?.type === 'CallExpression' || init?.type === 'NewExpression') && !transaction ? 'made' : 'other';
  }
  return undefined;
}

/** The first name of a receiver: `db` of `db`, `services.db`; `this` of `this.db`. */
function rootOf(receiver: Node): string | undefined {
  let n = unwrap(receiver);
  while (n?.type === 'MemberExpression') n = unwrap(n.object);
  return n?.type === 'Identifier' ? n.name : n?.type === 'ThisExpression' ? 'this' : undefined;
}

/** A function whose own `this` replaces the one around it (not an arrow). */
const ownThis = (n: Node) => n.type === 'FunctionExpression' || n.type === 'FunctionDeclaration';

/**
 * `this.x` at the end of `path`, where x is a constructor parameter of the
 * class around it that a dependency-injection container fills: the class or
 * the parameter is decorated (`@Injectable()`, `@Inject(TOKEN)`,
 * `@injectable()`, `@Service()`). The container makes it when it starts,
 * before any job runs, and keeps it for the object's life: it is no
 * transaction of a job.
 */
function injectedIn(path: readonly Node[], receiver: Node): boolean {
  const member = unwrap(receiver);
  if (member?.type !== 'MemberExpression' || unwrap(member.object)?.type !== 'ThisExpression') return false;
  const name = propertyName(member);
  if (name === undefined) return false;
  // The class whose `this` it is: the nearest class, with only the method's own function (or arrows) between.
  let functions = 0;
  for (let i = path.length - 1; i >= 0; i--) {
    const n = path[i];
    if (ownThis(n)) functions++;
    if (n.type !== 'ClassDeclaration' && n.type !== 'ClassExpression') continue;
    if (functions > 1) return false;
    const ctor = n.body.body.find((m): m is TSESTree.MethodDefinition => m.type === 'MethodDefinition' && m.kind === 'constructor');
    const param = ctor?.value.params.find((p): p is TSESTree.TSParameterProperty => p.type === 'TSParameterProperty' && p.parameter.type === 'Identifier' && p.parameter.name === name);
    return param !== undefined && ((n.decorators?.length ?? 0) > 0 || (param.decorators?.length ?? 0) > 0);
  }
  return false;
}

/** `this.x` filled by a dependency-injection container (see injectedIn). */
export function injected(program: TSESTree.Program, receiver: Node): boolean {
  const member = unwrap(receiver);
  return member?.type === 'MemberExpression' && unwrap(member.object)?.type === 'ThisExpression' && injectedIn(pathTo(program, receiver), receiver);
}

/**
 * The call that opens the transaction whose callback `at` runs in, when that
 * call is sent on `receiver` itself — the same name, bound outside the
 * callback and not rebound inside it: `db.transaction(async (tx) => { await
 * db.execute(...) })`. Whether the call is a transaction callback is the
 * driver modules' to say (the caller asks them).
 */
export function openerAround(program: TSESTree.Program, at: Node, receiver: Node): { call: Call; method: string; object: Node; bound: Bound } | undefined {
  const name = dottedName(receiver);
  const root = rootOf(receiver);
  if (name === undefined || root === undefined) return undefined;
  const path = pathTo(program, at);
  for (let i = path.length - 1; i > 0; i--) {
    const fn = path[i];
    const call = path[i - 1];
    if (!isFunction(fn) || call.type !== 'CallExpression' || !call.arguments.some((a) => unwrap(a as Node) === fn)) continue;
    const callee = unwrap(call.callee);
    if (callee?.type !== 'MemberExpression' || dottedName(callee.object) !== name) continue;
    const method = propertyName(callee);
    if (method === undefined) return undefined;
    const inside = path.slice(i);
    if (root === 'this') {
      // A function of its own between the call and the query has another `this`.
      if (inside.some(ownThis)) return undefined;
      return { call, method, object: callee.object, bound: injectedIn(path.slice(0, i), callee.object) ? 'injected' : 'other' };
    }
    // Rebound in the callback (its parameter, a local of the same name): another value.
    if (bindingIn(inside, root)) return undefined;
    const binding = bindingIn(path.slice(0, i), root);
    // `services.db` of a name made or imported: what it holds is the module's or the factory's, not known here.
    const bound = binding === undefined ? 'other' : root === name || binding.bound === 'parameter' ? binding.bound : 'other';
    return { call, method, object: callee.object, bound };
  }
  return undefined;
}
