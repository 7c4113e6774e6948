// What a generator function says it yields: `async def get_session() ->
// AsyncGenerator[AsyncSession, None]` (FastAPI's dependency idiom), iterated
// by a worker as `async for session in get_session():`. The loop's target is
// then a connection of the driver the annotation names, handed in by the
// generator in a state the loop does not know. The def is one of this file or
// a top-level def of the project module the name is imported from.
import { annotationOf } from '../drivers/index.ts';
import type { PythonDriver } from './driver-api.ts';
import { annotationType } from './defs.ts';
import { qualifiedName } from './imports.ts';
import { moduleDef, type ModuleSource } from './project.ts';
import { callParts, type Node } from '../syntax.ts';

/** What the file offers to find the def a call names. */
export interface GeneratorHost {
  readonly text: string;
  readonly imports: { fromImports: ReadonlyMap<string, { module: string; level: number; name: string }> };
  qualify(node: Node): string | undefined;
  resolveDef(expr: Node, at: Node): Node | undefined;
  projectModule(module: string, level: number): ModuleSource | undefined;
}

/** The generator types whose first type argument is what each step yields. */
const GENERATORS = /(^|\.)(Async)?(Generator|Iterator|Iterable)$/;

/** The driver whose connection the called generator yields, by its return annotation; undefined when it says none. */
export function yieldedConnection(host: GeneratorHost, iterable: Node): PythonDriver | undefined {
  const call = iterable.name === 'CallExpression' ? callParts(iterable, host.text) : undefined;
  if (!call || call.callee.name !== 'VariableName') return undefined;
  const local = host.resolveDef(call.callee, iterable);
  if (local) return yielded(local, host.text, (n) => host.qualify(n));
  const from = host.imports.fromImports.get(host.text.slice(call.callee.from, call.callee.to));
  const source = from ? host.projectModule(from.module, from.level) : undefined;
  const def = source && from ? moduleDef(source, from.name) : undefined;
  return def && source ? yielded(def, source.text, (n) => qualifiedName(n, source.text, source.imports)) : undefined;
}

function yielded(def: Node, text: string, qualify: (node: Node) => string | undefined): PythonDriver | undefined {
  if (def.name !== 'FunctionDefinition') return undefined;
  const returns = def.getChild('TypeDef')?.lastChild;
  if (returns?.name !== 'MemberExpression' || returns.lastChild?.name !== ']') return undefined;
  if (!GENERATORS.test(qualify(returns.firstChild!) ?? text.slice(returns.firstChild!.from, returns.firstChild!.to))) return undefined;
  const typed = annotationOf(qualify(annotationType(returns)));
  return typed?.kind === 'conn' ? typed.driver : undefined;
}
