// ORM code as the SQL it sends, so the rules judge it as they judge raw SQL.
// The ORM driver modules (drivers/django/orm-sql.ts, drivers/sqlalchemy/
// orm-sql.ts) write it with this writer, every piece mapped onto the code
// it stands for; values the code computes become $N placeholders with their
// SqlSite.params. Instance writes (an UPDATE or DELETE of the row read) are
// the same for every ORM.
import type { HostParam } from '../../../model/index.ts';
import { HostTextBuilder } from '../../host-text.ts';
import { hostParam } from '../flow/params.ts';
import { passedClock, passedNumber, type PassedArgument } from '../flow/project-callers.ts';
import type { ModuleSource } from '../flow/project.ts';
import type { HostText } from '../flow/strings.ts';
import { argsOf, children, dottedName, positional, span, unwrap, type Arg, type Node } from '../syntax.ts';
import { timedeltaSeconds } from '../timedelta.ts';

export interface ModelRef {
  /** The table's name (db_table, __tablename__, Table("name"), or Django's app_model default). */
  table: string;
  /** The class or Table variable. */
  name: string;
  /** Attributes assigned on an instance since it was read (Django: written by save()). */
  assigned?: Map<string, Node>;
  /** Django: what the model's `objects` is (`JobQuerySet.as_manager()`, `JobManager()`), in the module of the model. */
  manager?: { source: ModuleSource; value: Node };
  /** Django: the model's class and its module (what its own methods assign: `self.locked_by = None`). */
  definedIn?: { source: ModuleSource; def: Node };
  /** The row was read by a locking read (`with_for_update()`): what the code writes back to it is part of that read's transaction. */
  locked?: boolean;
  /** Writes that locking read as `SELECT id ...`, so a write-back the model cannot place in its transaction is read as the one claim it is. */
  lockingRead?: (w: SqlWriter) => void;
  /** SQLAlchemy Core: a `Table("jobs", ...)`, whose own `update()`, `delete()` and `insert()` build statements. */
  core?: boolean;
}

export interface OrmContext {
  text: string;
  qualify(node: Node): string | undefined;
  /** The value of a name assigned once (local or module constant). */
  valueOf(node: Node): Node | undefined;
  isParameter(name: string): boolean;
  /** The model (or Core Table) an expression names. */
  model(node: Node): ModelRef | undefined;
  /** The model instance a name holds. */
  instance(node: Node): ModelRef | undefined;
  /** Writes a subquery the code builds as a value (`select(...).scalar_subquery()`); false when it is none. */
  subquery?(w: SqlWriter, node: Node): boolean;
  /** The SQL literal of a class constant the expression names (`Job.Status.RUNNING`, Django's choices). */
  constant?(node: Node): string | undefined;
  /** The def of this file a callee names (`rows`, `self.rows`), seen from `at`. */
  defOf?(callee: Node, at: Node): Node | undefined;
  /** The default value of a parameter of the enclosing function (`def claim(lease_seconds=300)`). */
  parameterDefault?(name: string): Node | undefined;
  /** The def a callee names, in this file or a module of the project, with the text and names it is read in. */
  defSource?(callee: Node, at: Node): { def: Node; text: string; qualify(node: Node): string | undefined } | undefined;
  /** The values the enclosing function assigns to one of its parameters (`now = now or timezone.now()`). */
  parameterAssignments?(name: string): Node[];
  /** What every call of the enclosing function in this file passes for a parameter; undefined when a call passes nothing or none is seen. */
  parameterArguments?(name: string): Node[] | undefined;
  /** The same, read in every module of the project that calls the function (flow/project-callers.ts). */
  projectArguments?(name: string): PassedArgument[] | undefined;
}

/** An attribute written on an instance: the value, where, and for `+=`/`-=` the operator that adds it to the column. */
export interface PendingWrite {
  value: Node;
  at: Node;
  from?: '+' | '-';
}

export interface BuiltStatement {
  host: HostText;
  params: HostParam[];
  /** Django's `using(alias)` / `select_for_update` on another database. */
  using?: string;
  /** The statement reads rows of this model that the code keeps (`.first()`, `.get()`). */
  returnsInstance?: ModelRef;
}

/** A chain `root.a(...).b(...)`: the root expression and each call, innermost first. */
export interface Step {
  method: string;
  args: Arg[];
  node: Node;
}

export function flatten(node: Node, text: string): { root: Node; steps: Step[] } | undefined {
  const steps: Step[] = [];
  let current: Node | undefined = unwrap(node);
  while (current?.name === 'CallExpression') {
    const callee = current.firstChild;
    const argList = current.lastChild;
    if (!callee || callee.name !== 'MemberExpression' || argList?.name !== 'ArgList') break;
    const property = callee.lastChild;
    const object = callee.firstChild;
    if (!object || property?.name !== 'PropertyName') break;
    steps.unshift({ method: text.slice(property.from, property.to), args: argsOf(argList, text), node: current });
    current = unwrap(object);
  }
  return current && steps.length > 0 ? { root: current, steps } : undefined;
}

/** True when the call is not the object of a further `.method(...)` call (the end of a chain). */
export function isOuterCall(node: Node): boolean {
  const parent = node.parent;
  const object = parent?.firstChild;
  if (parent?.name === 'MemberExpression' && object && object.from === node.from && object.to === node.to && parent.parent?.name === 'CallExpression') return false;
  return true;
}

/** SQL written piece by piece, each piece mapped to a node of the host code. */
export class SqlWriter {
  readonly out = new HostTextBuilder();
  readonly params: HostParam[] = [];
  /**
   * Set while writing the values an UPDATE of one row of this table assigns: there,
   * an instance of the table read before (`job.attempts` in `job.attempts = job.attempts + 1`)
   * stands for the row's own column, as the database would compute it. Never in a WHERE.
   */
  ownRow?: string;

  constructor(readonly ctx: OrmContext) {}

  raw(sql: string, at: Node | { from: number; to: number }): void {
    this.out.push(sql, at.from, at.to);
  }

  /** A value: a literal, now(), now() +/- a timedelta, a column (F("x"), Job.x), x + 1, else a placeholder. */
  value(node: Node | undefined, at: Node, depth = 0): void {
    const expr = unwrap(node);
    if (!expr || depth > 6) return this.placeholder(node, at);
    const text = this.ctx.text.slice(expr.from, expr.to);
    switch (expr.name) {
      case 'String': {
        const literal = /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(text);
        if (literal) return this.raw(`'${literal[2].replace(/'/g, "''")}'`, expr);
        return this.placeholder(expr, at);
      }
      case 'Number':
        return /^\d+(\.\d+)?$/.test(text) ? this.raw(text, expr) : this.placeholder(expr, at);
      case 'Boolean':
        return this.raw(text.toLowerCase(), expr);
      case 'None':
        return this.raw('NULL', expr);
      case 'UnaryExpression':
        if (/^-\s*\d+$/.test(text)) return this.raw(text.replace(/\s+/g, ''), expr);
        return this.placeholder(expr, at);
      case 'BinaryExpression': {
        const [left, op, right] = children(expr);
        const operator = op ? this.ctx.text.slice(op.from, op.to) : '';
        // The row's own nullable column with a default (`job.attempts or 0`), as the database reads it.
        if (operator === 'or' && this.ownRow !== undefined && left && right) {
          this.raw('coalesce(', expr);
          this.value(left, at, depth + 1);
          this.raw(', ', op!);
          this.value(right, at, depth + 1);
          return this.raw(')', expr);
        }
        if ((operator === '+' || operator === '-') && left && right) {
          const seconds = intervalSeconds(right, this.ctx);
          this.value(left, at, depth + 1);
          if (seconds !== undefined) return this.raw(` ${operator} interval '${seconds} seconds'`, right);
          this.raw(` ${operator} `, op!);
          return this.value(right, at, depth + 1);
        }
        return this.placeholder(expr, at);
      }
      case 'CallExpression': {
        const callee = expr.firstChild!;
        const name = this.ctx.qualify(callee) ?? dottedName(callee, this.ctx.text) ?? '';
        if (isNow(name)) return this.raw('now()', expr);
        if (this.ctx.subquery?.(this, expr)) return;
        const args = argsOf(expr.lastChild, this.ctx.text);
        // `int(job.attempts or 0) + 1`: Python's int() of the row's own counter is the counter.
        if (name === 'int' && this.ownRow !== undefined && args.length === 1 && !args[0].name && !args[0].star) return this.value(args[0].value, at, depth + 1);
        if (/(^|\.)F$/.test(name)) {
          const column = literal(positional(args, 0), this.ctx);
          if (column) return this.raw(column.replace(/__/g, '.'), expr);
        }
        if (/(^|\.)(text|literal_column)$/.test(name) && /sqlalchemy/.test(name)) {
          const sql = literal(positional(args, 0), this.ctx);
          if (sql) return this.raw(sql, expr);
        }
        return this.placeholder(expr, at);
      }
      case 'MemberExpression': {
        // A class's literal constant (a choices member, STATUS_DONE on the model) before a model's column.
        const constant = this.ctx.constant?.(expr);
        if (constant !== undefined) return this.raw(constant, expr);
        const column = columnOf(expr, this.ctx);
        if (column) return this.raw(column, expr);
        const owner = this.ownRow !== undefined && expr.lastChild?.name === 'PropertyName' ? expr.firstChild : undefined;
        if (owner && this.ctx.instance(owner)?.table === this.ownRow) return this.raw(this.ctx.text.slice(expr.lastChild!.from, expr.lastChild!.to), expr);
        return this.placeholder(expr, at);
      }
      case 'VariableName': {
        // `def claim(now=None): now = now or timezone.now()`: a clock the caller may hand in (a test's fixed time) is the clock.
        // `def claim(worker, now)` that every call of the file hands `timezone.now()`: the clock too.
        if (this.ctx.isParameter(text)) {
          const assigned = this.ctx.parameterAssignments?.(text) ?? [];
          const clock =
            assigned.length > 0
              ? assigned.every((v) => isClockDefault(v, text, this.ctx))
              : (this.ctx.parameterArguments?.(text)?.every((v) => isClockDefault(v, '', this.ctx)) ?? this.ctx.projectArguments?.(text)?.every((a) => passedClock(a, isNow)) ?? false);
          return clock ? this.raw('now()', expr) : this.placeholder(expr, at);
        }
        const value = this.ctx.valueOf(expr);
        if (value && unwrap(value)?.name !== 'CallExpression') return this.value(value, expr, depth + 1);
        if (value && isNow(this.ctx.qualify(unwrap(value)!.firstChild!) ?? '')) return this.raw('now()', expr);
        // candidate = select(...).with_for_update(skip_locked=True).scalar_subquery(); ... jobs.c.id == candidate
        if (value && this.ctx.subquery?.(this, unwrap(value)!)) return;
        return this.placeholder(expr, at);
      }
      case 'ConditionalExpression': {
        // `DONE if ok else FAILED`: the value the condition picks, as the CASE the database would run.
        const [then, , condition, , otherwise] = children(expr);
        if (!then || !condition || !otherwise) return this.placeholder(expr, at);
        this.raw('CASE WHEN ', expr);
        this.placeholder(condition, condition);
        this.raw(' THEN ', expr);
        this.value(then, then, depth + 1);
        this.raw(' ELSE ', expr);
        this.value(otherwise, otherwise, depth + 1);
        return this.raw(' END', expr);
      }
      default:
        return this.placeholder(expr, at);
    }
  }

  placeholder(node: Node | undefined, at: Node): void {
    const where = node ?? at;
    this.params.push(hostParam(node, this.ctx.text, this.ctx.isParameter, this.ctx.valueOf));
    this.raw(`$${this.params.length}`, where);
  }

  build(span: { start: number; end: number }): { host: HostText; params: HostParam[] } {
    return { host: { ...this.out.done(span), composed: false }, params: this.params };
  }
}

export function isNow(name: string): boolean {
  return /^(django\.utils\.timezone\.now|datetime\.datetime\.now|datetime\.datetime\.utcnow|sqlalchemy\.func\.now|sqlalchemy\.sql\.func\.now|func\.now|timezone\.now|datetime\.now|datetime\.utcnow|now|utcnow)$/.test(name);
}

export function literal(node: Node | undefined, ctx: OrmContext): string | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName') expr = unwrap(ctx.valueOf(expr));
  if (expr?.name !== 'String') return undefined;
  return /^[rRuU]?(['"])((?:(?!\1)[^\\\n])*)\1$/.exec(ctx.text.slice(expr.from, expr.to))?.[2];
}

/**
 * A parameter's own fallback to the clock: `p or timezone.now()`, `timezone.now() if p is None else p`,
 * or the clock the def assigns it where the caller gave none (`if p is None: p = timezone.now()`).
 */
function isClockDefault(value: Node, name: string, ctx: OrmContext): boolean {
  const expr = unwrap(value);
  const isClock = (n: Node | undefined) => {
    const call = unwrap(n);
    return call?.name === 'CallExpression' && isNow(ctx.qualify(call.firstChild!) ?? dottedName(call.firstChild, ctx.text) ?? '');
  };
  const isName = (n: Node | undefined) => {
    const v = unwrap(n);
    return v?.name === 'VariableName' && ctx.text.slice(v.from, v.to) === name;
  };
  if (isClock(expr)) return true;
  if (expr?.name === 'BinaryExpression') {
    const [left, op, right] = children(expr);
    return !!op && ctx.text.slice(op.from, op.to) === 'or' && isName(left) && isClock(right);
  }
  if (expr?.name === 'ConditionalExpression') {
    const [then, , , , otherwise] = children(expr);
    return (isName(then) && isClock(otherwise)) || (isClock(then) && isName(otherwise));
  }
  return false;
}

/**
 * A number a timedelta() argument names: a literal, a name assigned one, a parameter's literal default (`def
 * claim(lease_seconds=300)`), the one number every call of the file passes, else every call of the project.
 */
function numberOf(node: Node | undefined, ctx: OrmContext, depth = 0): number | undefined {
  const expr = unwrap(node);
  if (expr?.name === 'Number' || depth > 3) return expr?.name === 'Number' ? Number(ctx.text.slice(expr.from, expr.to).replace(/_/g, '')) : undefined;
  if (expr?.name !== 'VariableName') return undefined;
  const name = ctx.text.slice(expr.from, expr.to);
  if (!ctx.isParameter(name)) return numberOf(ctx.valueOf(expr), ctx, depth + 1);
  const fallback = ctx.parameterDefault?.(name);
  if (fallback) return numberOf(fallback, ctx, depth + 1);
  // No default: the one number every call of the file passes (`claim(worker, LEASE_SECONDS)`).
  const inFile = ctx.parameterArguments?.(name);
  const passed = inFile ? inFile.map((a) => numberOf(a, ctx, depth + 1)) : (ctx.projectArguments?.(name) ?? []).map((a) => passedNumber(a));
  const values = new Set(passed);
  return passed.length > 0 && values.size === 1 && !values.has(undefined) ? passed[0] : undefined;
}

/** timedelta(minutes=5) -> 300; a name assigned such a value too. */
function intervalSeconds(node: Node, ctx: OrmContext, depth = 0): number | undefined {
  let expr = unwrap(node);
  if (expr?.name === 'VariableName' && depth < 3) expr = unwrap(ctx.valueOf(expr));
  if (!expr) return undefined;
  return timedeltaSeconds(expr, ctx.text, (n) => ctx.qualify(n), (n) => numberOf(n, ctx));
}

/** `Job.status`, `jobs.c.status`, `jobs.c["status"]`: the column name. */
export function columnOf(node: Node, ctx: OrmContext): string | undefined {
  const expr = unwrap(node);
  if (expr?.name !== 'MemberExpression') return undefined;
  const parts = children(expr);
  const object = parts[0];
  const last = parts[parts.length - 1];
  if (last?.name === ']') {
    const key = literal(parts[parts.length - 2], ctx);
    return key && object && /\.c$/.test(ctx.text.slice(object.from, object.to)) ? key : undefined;
  }
  if (last?.name !== 'PropertyName' || !object) return undefined;
  const name = ctx.text.slice(last.from, last.to);
  const owner = ctx.text.slice(object.from, object.to);
  if (/\.c$/.test(owner)) return name;
  return ctx.model(object) ? name : undefined;
}

export function emptyHost(node: Node): HostText {
  return { text: '', starts: [], ends: [], holes: [], span: span(node), composed: false };
}

export function isTrue(node: Node | undefined, ctx: OrmContext): boolean {
  const expr = unwrap(node);
  if (!expr) return false;
  if (expr.name === 'VariableName') return isTrue(ctx.valueOf(expr), ctx);
  return ctx.text.slice(expr.from, expr.to) === 'True';
}

export function listOfStrings(node: Node, ctx: OrmContext): string[] | undefined {
  const expr = unwrap(node);
  if (!expr || (expr.name !== 'ArrayExpression' && expr.name !== 'TupleExpression')) return undefined;
  const items = children(expr).filter((c) => !['[', ']', '(', ')', ','].includes(c.name));
  const values = items.map((i) => literal(i, ctx));
  return values.every((v) => v !== undefined) ? (values as string[]) : undefined;
}

/** session.delete(job): DELETE of the instance's row. */
export function deleteInstance(instance: ModelRef, at: Node): BuiltStatement {
  const w = new SqlWriter({ text: '', qualify: () => undefined, valueOf: () => undefined, isParameter: () => false, model: () => undefined, instance: () => undefined });
  w.raw(`DELETE FROM ${instance.table} WHERE id = $1`, at);
  return { ...w.build(span(at)), params: [{ kind: 'unknown' }] };
}

/**
 * `job.status = "done"; job.attempts = Job.attempts + 1` on a SQLAlchemy instance: the one UPDATE its session flushes.
 * With `claimed`, the rows are the ones a locking read took: `... WHERE id IN (SELECT id ... FOR UPDATE SKIP LOCKED)`,
 * the read and its write-back as one claim (what they are when one transaction holds both).
 */
export function updateInstance(instance: ModelRef, assigned: Map<string, PendingWrite>, ctx: OrmContext, claimed?: (w: SqlWriter) => void): BuiltStatement | undefined {
  const writes = [...assigned];
  if (writes.length === 0) return undefined;
  const first = writes[0][1].at;
  const w = new SqlWriter(ctx);
  w.raw(`UPDATE ${instance.table} SET `, first);
  w.ownRow = instance.table;
  writes.forEach(([column, { value, at, from }], k) => {
    if (k > 0) w.raw(', ', at);
    w.raw(from ? `${column} = ${column} ${from} ` : `${column} = `, at);
    w.value(value, value);
  });
  w.ownRow = undefined;
  if (claimed) {
    w.raw(' WHERE id IN (', first);
    claimed(w);
    w.raw(')', first);
  } else {
    w.raw(' WHERE id = ', first);
    w.placeholder(undefined, first);
  }
  return w.build(span(first));
}
