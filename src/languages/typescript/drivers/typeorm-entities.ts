// A TypeORM entity class as the table it maps to, from its decorators when
// the scan holds the class (`@Entity('jobs', { schema })`, `@Column({ name:
// 'run_after' })`), else by TypeORM's DefaultNamingStrategy: the table is the
// class name in snake_case (`tableName()` snake-cases the target's name) and
// a column is its property name as it is (`columnName()` returns it
// unchanged). A project that sets another naming strategy names them
// otherwise; the queue rules need a claim and its finish to name one table
// alike, which either reading gives.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { snake } from '../builder-sql.ts';
import { namedProperties, objectProperty, stringValue, unwrap, type Node } from '../syntax.ts';

export interface EntityTable {
  table: string;
  /** Property -> column, for the properties a decorator names otherwise. */
  columns: ReadonlyMap<string, string>;
  /** The primary column (`@PrimaryGeneratedColumn`, `@PrimaryColumn`), when the class is read. */
  primary?: string;
}

const COLUMN_DECORATORS = /^(Column|PrimaryColumn|PrimaryGeneratedColumn|CreateDateColumn|UpdateDateColumn|DeleteDateColumn|VersionColumn|ObjectIdColumn)$/;

function decoratorCall(d: TSESTree.Decorator): { name: string; args: Node[] } | undefined {
  const e = unwrap(d.expression as Node);
  if (e?.type === 'CallExpression' && unwrap(e.callee)?.type === 'Identifier') return { name: (unwrap(e.callee) as TSESTree.Identifier).name, args: e.arguments as Node[] };
  return undefined;
}

/** A string option of a decorator's options object: `{ name: 'run_after' }`. */
function option(args: Node[], key: string): string | undefined {
  for (const arg of args) {
    const o = unwrap(arg);
    if (o?.type !== 'ObjectExpression') continue;
    const p = objectProperty(o, key);
    const value = p ? stringValue(p.value as Node) : undefined;
    if (value) return value;
  }
  return undefined;
}

/** The table of an `@Entity` class the scan holds. */
function declaredTable(declaration: Node): EntityTable | undefined {
  if (declaration.type !== 'ClassDeclaration' || !declaration.id) return undefined;
  const entity = (declaration.decorators ?? []).map(decoratorCall).find((d) => d?.name === 'Entity');
  if (!entity) return undefined;
  const name = stringValue(entity.args[0]) ?? option(entity.args, 'name') ?? snake(declaration.id.name);
  const schema = option(entity.args, 'schema');
  const columns = new Map<string, string>();
  let primary: string | undefined;
  for (const member of declaration.body.body) {
    if (member.type !== 'PropertyDefinition' || member.key.type !== 'Identifier') continue;
    for (const d of member.decorators ?? []) {
      const call = decoratorCall(d);
      if (!call || !COLUMN_DECORATORS.test(call.name)) continue;
      const column = option(call.args, 'name') ?? member.key.name;
      if (column !== member.key.name) columns.set(member.key.name, column);
      if (call.name.startsWith('Primary')) primary ??= column;
    }
  }
  return { table: schema ? `${schema}.${name}` : name, columns, primary };
}

/**
 * The table an entity argument stands for: a class (`Job`, read from its
 * declaration when `declarationOf` finds it) or its name as a string
 * (`'job'`, an entity's name TypeORM looks up). Undefined for anything else.
 */
export function entityTable(node: Node | undefined, declarationOf: (n: Node) => Node | undefined): EntityTable | undefined {
  const n = unwrap(node);
  if (n?.type !== 'Identifier') return undefined;
  const declared = unwrap(declarationOf(n));
  // Something the scan holds that is not an `@Entity` class (an EntitySchema, a `@ChildEntity` whose table is its
  // parent's, a `@ViewEntity`): not a table it can name.
  if (declared) return declaredTable(declared);
  // A class the scan does not hold: TypeORM's default naming, if it is a class name.
  if (!/^[A-Z]/.test(n.name)) return undefined;
  return { table: snake(n.name), columns: new Map() };
}

export const columnOf = (entity: EntityTable, property: string): string => entity.columns.get(property) ?? property;

/** The keys of an object literal with plain keys, or undefined. */
export function plainKeys(node: Node | undefined): { key: string; property: TSESTree.Property }[] | undefined {
  const o = unwrap(node);
  return o?.type === 'ObjectExpression' && o.properties.every((p) => p.type === 'Property' && !p.computed) ? namedProperties(o) : undefined;
}
