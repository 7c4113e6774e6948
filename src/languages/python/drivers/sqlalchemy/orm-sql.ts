// SQLAlchemy's ORM and Core as the SQL they send: session.query(Job)
// chains (filter, with_for_update(skip_locked=True), update, delete),
// select/update/delete/insert builders with where() conditions and values(),
// subqueries as values, and the reads of one row the code keeps.
import { argsOf, children, dottedName, keyword, positional, span, unwrap, type Arg, type Node } from '../../syntax.ts';
import { columnOf, emptyHost, flatten as flattenCalls, isTrue, literal, SqlWriter, type BuiltStatement, type ModelRef, type OrmContext, type Step } from '../../orm/writer.ts';


const COMPARE: Record<string, string> = { '==': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

/** A SQLAlchemy where-clause expression as SQL; false when it is not one we read (then nothing was written). */
function saCondition(node: Node, w: SqlWriter, depth = 0): boolean {
  const expr = unwrap(node);
  if (!expr || depth > 8) return false;
  const ctx = w.ctx;
  // `eligible = or_(...)` then `.where(eligible)`: the condition the name holds where it is used.
  if (expr.name === 'VariableName') {
    const value = ctx.valueOf(expr);
    return value ? saCondition(value, w, depth + 1) : false;
  }
  if (expr.name === 'BinaryExpression') {
    const [left, op, right] = children(expr);
    const operator = op ? ctx.text.slice(op.from, op.to) : '';
    if ((operator === '&' || operator === '|' || operator === 'and' || operator === 'or') && left && right) {
      w.raw('(', expr);
      if (!saCondition(left, w, depth + 1)) w.raw('true', left);
      w.raw(operator === '&' || operator === 'and' ? ' AND ' : ' OR ', op!);
      if (!saCondition(right, w, depth + 1)) w.raw('true', right);
      w.raw(')', expr);
      return true;
    }
    if (op?.name === 'CompareOp' && left && right && COMPARE[operator]) {
      const column = columnOf(left, ctx);
      if (!column) return false;
      w.raw(column, left);
      if (unwrap(right)?.name === 'None') {
        w.raw(operator === '==' ? ' IS NULL' : ' IS NOT NULL', right);
        return true;
      }
      w.raw(` ${COMPARE[operator]} `, op);
      w.value(right, right);
      return true;
    }
    return false;
  }
  if (expr.name === 'CallExpression') {
    const callee = expr.firstChild!;
    const name = ctx.qualify(callee) ?? dottedName(callee, ctx.text) ?? '';
    const args = argsOf(expr.lastChild, ctx.text);
    if (/(^|\.)(and_|or_)$/.test(name)) {
      w.raw('(', expr);
      args.forEach((a, k) => {
        if (k > 0) w.raw(/and_$/.test(name) ? ' AND ' : ' OR ', a.value);
        if (!saCondition(a.value, w, depth + 1)) w.raw('true', a.value);
      });
      w.raw(')', expr);
      return true;
    }
    if (callee.name === 'MemberExpression') {
      const method = ctx.text.slice(callee.lastChild!.from, callee.lastChild!.to);
      const column = columnOf(callee.firstChild!, ctx);
      if (column && (method === 'in_' || method === 'is_' || method === 'isnot' || method === 'is_not')) {
        if (method === 'in_') {
          const list = positional(args, 0);
          w.raw(`${column} IN `, expr);
          if (!list || !writeSubquery(w, unwrap(list)!)) {
            w.raw('(SELECT unnest(', expr);
            w.placeholder(list, expr);
            w.raw('))', expr);
          }
        } else w.raw(`${column} IS ${method === 'is_' ? '' : 'NOT '}NULL`, expr);
        return true;
      }
    }
  }
  return false;
}

function saWhere(steps: Step[], w: SqlWriter): void {
  let first = true;
  for (const step of steps) {
    if (step.method === 'where' || step.method === 'filter') {
      for (const a of step.args.filter((x) => !x.name && !x.star)) {
        const at = w.out.text.length;
        w.raw(first ? ' WHERE ' : ' AND ', a.value);
        if (!saCondition(a.value, w)) {
          // Not read: leave it out.
          w.out.text = w.out.text.slice(0, at);
          w.out.starts.length = at;
          w.out.ends.length = at;
          continue;
        }
        first = false;
      }
    } else if (step.method === 'filter_by') {
      for (const a of step.args.filter((x) => x.name)) {
        w.raw(first ? ' WHERE ' : ' AND ', a.value);
        first = false;
        w.raw(`${a.name} = `, a.value);
        w.value(a.value, a.value);
      }
    }
  }
}

/** The `key: value` pairs of a dict literal whose keys are column names or columns. */
function dictPairs(dict: Node, w: SqlWriter, pairs: [string, Node, Node][]): void {
  const parts = children(dict).filter((c) => c.name !== '{' && c.name !== '}');
  for (let i = 0; i + 2 < parts.length + 1; i++) {
    if (parts[i].name === ',') continue;
    const key = parts[i];
    const value = parts[i + 2];
    if (parts[i + 1]?.name !== ':' || !value) break;
    const column = literal(key, w.ctx) ?? columnOf(key, w.ctx);
    if (column) pairs.push([column, value, key]);
    i += 2;
  }
}

/**
 * values(status="done", attempts=Job.attempts + 1) or values({Job.status: "done"}) / update({"status": "done"}),
 * or values(**changes) with `changes = {"status": "done", ...}` assigned once in the function (keys the code
 * adds later on some paths, `changes["result"] = r`, are not read).
 */
function saAssignments(args: Arg[], w: SqlWriter): boolean {
  const pairs: [string, Node, Node][] = [];
  for (const a of args) if (a.name) pairs.push([a.name, a.value, a.value]);
  const dict = unwrap(positional(args, 0));
  if (dict?.name === 'DictionaryExpression') dictPairs(dict, w, pairs);
  for (const a of args) {
    if (a.star !== '**') continue;
    const held = unwrap(a.value);
    const value = held?.name === 'VariableName' ? unwrap(w.ctx.valueOf(held)) : held;
    if (value?.name === 'DictionaryExpression') dictPairs(value, w, pairs);
  }
  if (pairs.length === 0) return false;
  pairs.forEach(([column, value, at], k) => {
    if (k > 0) w.raw(', ', at);
    w.raw(`${column} = `, at);
    w.value(value, value);
  });
  return true;
}

const MODULE_BUILDER = /^(?:sqlalchemy(?:\.sql|\.sql\.expression|\.future|\.dialects\.postgresql)?|sqlmodel(?:\.sql\.expression)?)\.(select|update|delete|insert)$/;

/**
 * The chain of method calls ending at `node`, rooted at its builder: a call
 * of a module's function (`sa.select(M)`, Flask-SQLAlchemy's `db.select(M)`)
 * is the root, not a method of the name it is called on.
 */
function flatten(node: Node, ctx: OrmContext): ReturnType<typeof flattenCalls> {
  const chain = flattenCalls(node, ctx.text);
  if (!chain || chain.root.name === 'CallExpression' || !MODULE_BUILDER.test(ctx.qualify(chain.steps[0].node.firstChild!) ?? '')) return chain;
  return chain.steps.length > 1 ? { root: chain.steps[0].node, steps: chain.steps.slice(1) } : undefined;
}

/**
 * SQLAlchemy statements as SQL: select(M)...with_for_update(skip_locked=True),
 * update(M).where(...).values(...), delete(M).where(...), insert(M).values(...),
 * and session.query(M)....with_for_update(...)/.update({...})/.delete().
 * A name holding such a statement is followed to its one assignment.
 */
export function sqlalchemyStatement(node: Node, ctx: OrmContext, depth = 0): BuiltStatement | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) {
    const value = ctx.valueOf(expr);
    return value ? sqlalchemyStatement(value, ctx, depth + 1) : undefined;
  }
  if (!expr || expr.name !== 'CallExpression') return undefined;
  const chain = flatten(expr, ctx);
  // The builder: select(M) / update(M) / delete(M) / insert(M) at the root, or session.query(M).
  let rootCall: Node | undefined;
  let kind: string | undefined;
  let steps: Step[] = [];
  let modelArg: Node | undefined;
  if (chain && chain.steps[0].method === 'query' && chain.steps.length > 1) {
    kind = 'query';
    modelArg = positional(chain.steps[0].args, 0);
    steps = chain.steps.slice(1);
    rootCall = chain.steps[0].node;
  } else if (chain && isModelQuery(chain.root, ctx)) {
    // Model.query: session.query(Model) on the scoped Session (Flask-SQLAlchemy's, or a query_property).
    kind = 'query';
    modelArg = chain.root.firstChild!;
    steps = chain.steps;
    rootCall = chain.root;
  } else if (chain && CORE_METHODS.has(chain.steps[0].method) && !positional(chain.steps[0].args, 0) && ctx.model(chain.root)?.core) {
    // jobs.update().values(...).where(...): a Core Table's own builder, as update(jobs) is.
    kind = chain.steps[0].method;
    modelArg = chain.root;
    steps = chain.steps.slice(1);
    rootCall = chain.steps[0].node;
  } else {
    const root = chain ? chain.root : expr;
    if (root.name !== 'CallExpression') return undefined;
    const name = ctx.qualify(root.firstChild!) ?? '';
    const builder = /^(?:sqlalchemy(?:\.sql|\.sql\.expression|\.future|\.dialects\.postgresql)?|sqlmodel(?:\.sql\.expression)?)\.(select|update|delete|insert)$/.exec(name);
    if (!builder) return undefined;
    kind = builder[1];
    modelArg = positional(argsOf(root.lastChild, ctx.text), 0);
    steps = chain ? chain.steps : [];
    rootCall = root;
  }
  const model = modelArg ? (ctx.model(modelArg) ?? ownerModel(modelArg, ctx)) : undefined;
  if (!model || !rootCall) return undefined;
  const w = new SqlWriter(ctx);
  const last = steps[steps.length - 1];
  const lock = steps.find((s) => s.method === 'with_for_update');
  if (kind === 'update' || (kind === 'query' && last?.method === 'update')) {
    w.raw(`UPDATE ${model.table} SET `, rootCall);
    const values = kind === 'update' ? steps.filter((s) => s.method === 'values').flatMap((s) => s.args) : last.args;
    if (!saAssignments(values, w)) return undefined;
    saWhere(steps, w);
    if (steps.some((s) => s.method === 'returning')) w.raw(' RETURNING id', steps.find((s) => s.method === 'returning')!.node);
  } else if (kind === 'delete' || (kind === 'query' && last?.method === 'delete')) {
    w.raw(`DELETE FROM ${model.table}`, rootCall);
    saWhere(steps, w);
    if (steps.some((s) => s.method === 'returning')) w.raw(' RETURNING id', steps.find((s) => s.method === 'returning')!.node);
  } else if (kind === 'insert') {
    const values = steps.filter((s) => s.method === 'values').flatMap((s) => s.args).filter((a) => a.name);
    if (values.length === 0) return undefined;
    w.raw(`INSERT INTO ${model.table} (${values.map((a) => a.name).join(', ')}) VALUES (`, rootCall);
    values.forEach((a, k) => {
      if (k > 0) w.raw(', ', a.value);
      w.value(a.value, a.value);
    });
    w.raw(')', rootCall);
  } else if (lock) {
    writeSelect(w, rootCall, modelArg!, model, steps);
    const lockingRead = (into: SqlWriter) => writeSelect(into, rootCall, modelArg!, model, steps, 'id');
    return { ...w.build(span(expr)), returnsInstance: { table: model.table, name: model.name, locked: true, lockingRead } };
  } else {
    if (kind === 'query' && last && ['first', 'one', 'one_or_none', 'get'].includes(last.method)) {
      return { host: emptyHost(expr), params: [], returnsInstance: { table: model.table, name: model.name } };
    }
    return undefined;
  }
  return w.build(span(expr));
}

/** The statements a Core Table builds with its own methods (`jobs.update()`). */
const CORE_METHODS = new Set(['update', 'delete', 'insert']);

/** `Job.query`, where Job is a model the code defines: its query property. */
export function isModelQuery(node: Node, ctx: OrmContext): boolean {
  if (node.name !== 'MemberExpression' || node.lastChild?.name !== 'PropertyName') return false;
  if (ctx.text.slice(node.lastChild.from, node.lastChild.to) !== 'query') return false;
  return !!node.firstChild && ctx.model(node.firstChild) !== undefined;
}

/** SELECT <column or *> FROM t WHERE ... [LIMIT 1] FOR UPDATE [SKIP LOCKED]: a select() chain. */
function writeSelect(w: SqlWriter, rootCall: Node, selected: Node, model: ModelRef, steps: Step[], only?: string): void {
  const ctx = w.ctx;
  const column = only ?? (ctx.model(selected) ? undefined : columnOf(selected, ctx));
  w.raw(`SELECT ${column ?? '*'} FROM ${model.table}`, rootCall);
  saWhere(steps, w);
  const last = steps[steps.length - 1];
  const limit = steps.find((s) => s.method === 'limit');
  if (limit || (last && ['first', 'one', 'one_or_none', 'scalar'].includes(last.method))) w.raw(' LIMIT 1', (limit ?? last).node);
  const lock = steps.find((s) => s.method === 'with_for_update');
  if (!lock) return;
  const skip = keyword(lock.args, 'skip_locked');
  const nowait = keyword(lock.args, 'nowait');
  w.raw(isTrue(keyword(lock.args, 'key_share'), ctx) || isTrue(keyword(lock.args, 'read'), ctx) ? ' FOR SHARE' : ' FOR UPDATE', lock.node);
  if (isTrue(skip, ctx)) w.raw(' SKIP LOCKED', skip!);
  else if (isTrue(nowait, ctx)) w.raw(' NOWAIT', nowait!);
}

/** select(jobs.c.id) / select(Job.id): the model the column belongs to. */
function ownerModel(node: Node, ctx: OrmContext): ModelRef | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'MemberExpression') return undefined;
  let owner = expr.firstChild ?? undefined;
  if (owner?.name === 'MemberExpression' && ctx.text.slice(owner.from, owner.to).endsWith('.c')) owner = owner.firstChild ?? undefined;
  return owner ? ctx.model(owner) : undefined;
}

/** `select(...)....scalar_subquery()` as a value: its SQL in parentheses, or false when it is not one. */
export function writeSubquery(w: SqlWriter, node: Node, depth = 0): boolean {
  const ctx = w.ctx;
  // `picked = select(...)...scalar_subquery()` then `Job.id.in_(picked)`: the statement the name holds.
  const named = unwrap(node);
  if (named?.name === 'VariableName') {
    const value = depth < 3 ? ctx.valueOf(named) : undefined;
    return value ? writeSubquery(w, value, depth + 1) : false;
  }
  const chain = flatten(node, ctx);
  const root = chain ? chain.root : node;
  if (root.name !== 'CallExpression' || !isSelect(root, ctx)) return false;
  const selected = positional(argsOf(root.lastChild, ctx.text), 0);
  if (!selected) return false;
  const model = ctx.model(selected) ?? ownerModel(selected, ctx);
  if (model) {
    w.raw('(', node);
    writeSelect(w, root, selected, model, chain ? chain.steps : []);
    w.raw(')', node);
    return true;
  }
  // select(ready.c.id) over `ready = select(Job.id)...with_for_update(skip_locked=True).cte("ready")`:
  // the CTE's own select, which takes the locks, for that column (a further filter here is not read).
  if (chain?.steps.some((s) => s.method !== 'scalar_subquery')) return false;
  const inner = namedSelect(selected, ctx);
  const column = columnOf(selected, ctx);
  if (!inner || !column) return false;
  w.raw('(', node);
  writeSelect(w, inner.root, inner.selected, inner.model, inner.steps, column);
  w.raw(')', node);
  return true;
}

function isSelect(call: Node, ctx: OrmContext): boolean {
  return /^(?:sqlalchemy(\.sql|\.sql\.expression|\.future)?|sqlmodel)\.select$/.test(ctx.qualify(call.firstChild!) ?? '');
}

/** Methods that make a select a named relation the code selects from (`.cte("ready")`, `.subquery()`, `.alias()`). */
const RELATION = new Set(['cte', 'subquery', 'alias']);

/** `ready.c.id` where `ready` holds a select made a relation (`.cte(...)`): that select. */
function namedSelect(column: Node, ctx: OrmContext): { root: Node; selected: Node; model: ModelRef; steps: Step[] } | undefined {
  const expr = unwrap(column);
  const owner = expr?.name === 'MemberExpression' ? expr.firstChild : undefined;
  if (owner?.name !== 'MemberExpression' || !ctx.text.slice(owner.from, owner.to).endsWith('.c')) return undefined;
  const relation = owner.firstChild;
  const value = relation?.name === 'VariableName' ? ctx.valueOf(relation) : undefined;
  const chain = value ? flatten(value, ctx) : undefined;
  if (!chain || chain.root.name !== 'CallExpression' || !isSelect(chain.root, ctx) || !RELATION.has(chain.steps[chain.steps.length - 1].method)) return undefined;
  const selected = positional(argsOf(chain.root.lastChild, ctx.text), 0);
  const model = selected ? (ctx.model(selected) ?? ownerModel(selected, ctx)) : undefined;
  return selected && model ? { root: chain.root, selected, model, steps: chain.steps } : undefined;
}

/**
 * A SQLAlchemy read of one row: session.query(M)...first(), session.get(M, id),
 * session.scalars(select(M)...).first(), session.execute(select(M)...).scalar_one().
 */
export function sqlalchemyInstanceRead(node: Node, ctx: OrmContext): BuiltStatement | undefined {
  const chain = resultChain(node, ctx);
  if (!chain) return undefined;
  const { steps } = chain;
  if (steps[0].method === 'get' && steps.length === 1) {
    const model = positional(steps[0].args, 0);
    const ref = model ? ctx.model(model) : undefined;
    return ref ? { host: emptyHost(node), params: [], returnsInstance: { table: ref.table, name: ref.name } } : undefined;
  }
  const direct = sqlalchemyStatement(node, ctx);
  if (direct?.returnsInstance) return direct;
  // session.scalars(stmt).first() / session.execute(stmt).scalar_one()
  const run = steps.findIndex((s) => s.method === 'scalars' || s.method === 'execute' || s.method === 'scalar');
  if (run < 0) return undefined;
  const statement = positional(steps[run].args, 0);
  const built = statement ? sqlalchemyStatement(statement, ctx) : undefined;
  const model = built?.returnsInstance ?? selectModel(statement, ctx);
  return model ? { host: emptyHost(node), params: [], returnsInstance: model } : undefined;
}

/** Methods of a Result that read its rows: `result.scalar_one_or_none()`, `result.scalars().first()`. */
const RESULT_READS = new Set(['scalar_one_or_none', 'scalar_one', 'scalar', 'scalars', 'first', 'one', 'one_or_none', 'fetchone']);

/**
 * The call chain of a read, with a Result kept in a name followed to the call
 * that made it: `result = await session.execute(stmt)` then
 * `job = result.scalar_one_or_none()` is `session.execute(stmt).scalar_one_or_none()`.
 */
export function resultChain(node: Node, ctx: OrmContext): { root: Node; steps: Step[] } | undefined {
  const chain = flatten(node, ctx);
  if (!chain || chain.root.name !== 'VariableName' || !RESULT_READS.has(chain.steps[0].method)) return chain;
  const made = unwrap(ctx.valueOf(chain.root));
  const before = made?.name === 'CallExpression' ? flatten(made, ctx) : undefined;
  if (!before || !before.steps.some((s) => s.method === 'execute' || s.method === 'scalars' || s.method === 'exec')) return chain;
  return { root: before.root, steps: [...before.steps, ...chain.steps] };
}

function selectModel(node: Node | undefined, ctx: OrmContext, depth = 0): ModelRef | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) expr = unwrap(ctx.valueOf(expr));
  if (expr?.name !== 'CallExpression') return undefined;
  const chain = flatten(expr, ctx);
  const root = chain ? chain.root : expr;
  if (root.name !== 'CallExpression' || !/\.select$/.test(ctx.qualify(root.firstChild!) ?? '')) return undefined;
  const model = positional(argsOf(root.lastChild, ctx.text), 0);
  const ref = model ? ctx.model(model) : undefined;
  return ref ? { table: ref.table, name: ref.name } : undefined;
}
