import { crossFileParts, type Decide, type Decision } from '../src/model/cross-file.ts';
import { lineIndexOf } from '../src/model/lines.ts';
import type { Ref } from '../src/model/queue.ts';
import { sqlSideEffect, waitsNothing } from '../src/languages/sql/side-effects.ts';
import { defineRule, type FileModel, type SideEffectCall, type Span } from '../src/model/index.ts';
import { asLevel } from '../src/model/settings.ts';
import type { CallArgument, ParameterTest, SettingValue } from '../src/sql/facts.ts';
import { UPDATE_SET, DELETE_FROM, INSERT_INTO, MERGE_INTO, TRANSACTION_OPENED } from '../src/model/triggers.ts';

type Options = Record<string, never>;

const HARM =
  "a rollback does not take back what it sent, so a failed job's e-mail, request or message goes out again on every retry, and while it waits the open transaction keeps its row locks and holds VACUUM back for every table (measured: dequeue 0.7 ms → 8.3 ms over 100,000 jobs). Commit the claim first and call it outside the transaction, or write it to an outbox table in the transaction and send it after the commit.";

/** How deep calls between the project's own routines are followed. */
const MAX_CALL_DEPTH = 4;

/** A call made inside a transaction after its first statement that locks or writes rows. */
interface CallFact {
  callee: string;
  at: Ref;
  /** The line of that first locking statement, and what it did ('locked' or 'written'). */
  line: number;
  what: string;
  /** The front end's chain for a project function of TS or Python that calls out (the callee first). */
  through?: string[];
  /** The routine the call is made in (a routine calling itself is not followed). */
  inRoutine?: string;
  /** A SQL call's arguments: whether they pass the tests a callee makes before it calls out. */
  args?: CallArgument[];
}

interface RoutineFact {
  name: string;
  /** The routines and functions its body calls (built-ins left out). */
  calls: string[];
  /** Calls out it makes only in the THEN branch of tests of its parameters (`IF p_lock_wait > 0 THEN ... pg_sleep`). */
  callsOnlyIf?: { callee: string; onlyIf: ParameterTest[] }[];
  /** Its parameters in order, and their literal defaults: what a call that leaves one out passes. */
  parameters?: string[];
  defaults?: (SettingValue | undefined)[];
  at: Ref;
}

interface SideEffectFacts {
  /** Calls that reach the outside world themselves: fetch, a mailer, http_post, dblink. */
  direct: CallFact[];
  /** SQL calls of other routines: they call out when the routine does, in this file or another of the project. */
  routineCalls: CallFact[];
  /** The routines this file defines (CREATE FUNCTION / PROCEDURE), with what they call. */
  routines: RoutineFact[];
}

function read(model: FileModel): SideEffectFacts {
  const facts: SideEffectFacts = { direct: [], routineCalls: [], routines: [] };
  let lines: ReturnType<typeof lineIndexOf> | undefined;
  const ref = (span: Span): Ref => ({ span, loc: (lines ??= lineIndexOf(model.text)).location(span) });
  let locking: Map<string, LockingStatement[]> | undefined;
  /**
   * The call as a fact when it runs after a locking statement of its transaction: the first before it that locks
   * rows, else the first that writes, leaving out those that took no row on every path to the call (a PL/pgSQL wait
   * in the IF NOT FOUND of its claim). (A helper walked in place of its call may write further up the file than the
   * claim that runs before it.)
   */
  const afterLock = (
    callee: string,
    span: Span,
    scopeId: string,
    tookNothing?: readonly Span[],
    handler?: Handler,
    where: Pick<SideEffectCall, 'calledAt' | 'inHelper'> = {},
  ): CallFact | undefined => {
    locking ??= lockingStatements(model);
    const { calledAt, inHelper } = where;
    // TS: in the same project function walked at the same call, in its own order; else in the order of the calls that run them.
    // Python: a statement of the helper walked in place of the call runs before the call out when it comes before it in the helper.
    const runsBefore = (s: LockingStatement) => {
      if (calledAt) return s.calledAt === calledAt.start ? s.start < span.start : s.order < calledAt.start;
      if (inHelper && s.start >= inHelper.from && s.start < inHelper.to) return s.start < inHelper.at;
      return s.order < span.start;
    };
    const before =
      locking
        .get(scopeId)
        ?.filter((s) => runsBefore(s) && !tookNothing?.some((t) => t.start === s.start && t.end === s.end) && !(handler && rolledBackFor(s, handler))) ?? [];
    const first = before.find((s) => s.what === 'locked') ?? before[0];
    if (!first) return undefined;
    return { callee, at: ref(span), line: (lines ??= lineIndexOf(model.text)).position(first.start).line, what: first.what };
  };
  for (const call of model.sideEffects) {
    if (call.scope.kind !== 'transaction') continue;
    const fact = afterLock(call.callee, call.span, call.scope.id, undefined, undefined, call);
    if (fact) facts.direct.push(call.through ? { ...fact, through: call.through } : fact);
  }
  const routines = new Map<string, RoutineFact>();
  for (const site of model.sites) {
    for (const statement of site.analysis.statements) {
      const routine = statement.routine;
      let own: RoutineFact | undefined;
      if (routine && routine.kind !== 'do') {
        own = routines.get(routine.name);
        if (!own) {
          own = { name: routine.name, calls: [], at: ref(routine.span ?? statement.span) };
          if (routine.parameters) own.parameters = routine.parameters;
          if (routine.parameterDefaults) own.defaults = routine.parameterDefaults;
          routines.set(routine.name, own);
        }
      }
      const onlyIf = statement.plpgsql?.onlyIf;
      for (const call of statement.calls ?? []) {
        if (waitsNothing(call)) continue;
        if (own && onlyIf && sqlSideEffect(call.name)) (own.callsOnlyIf ??= []).push({ callee: call.name, onlyIf });
        else if (own && !own.calls.includes(call.name)) own.calls.push(call.name);
        if (site.scope.kind !== 'transaction') continue;
        const handlerOf = statement.plpgsql?.handlerOf;
        const handler = handlerOf !== undefined && routine?.span ? { block: handlerOf, routineAt: routine.span.start } : undefined;
        const fact = afterLock(call.name, call.span, site.scope.id, statement.plpgsql?.tookNothing, handler);
        if (!fact) continue;
        if (sqlSideEffect(call.name)) facts.direct.push(fact);
        else facts.routineCalls.push({ ...fact, args: call.args, ...(routine ? { inRoutine: routine.name } : {}) });
      }
    }
  }
  facts.routines = [...routines.values()];
  return facts;
}

const decide: Decide<Options, SideEffectFacts> = (files, { mode, place }) => {
  const decisions: Decision[] = [];
  const chains = routinesCallingOut(files);
  for (const { file, facts } of files) {
    for (const call of facts.direct) {
      const data = { callee: call.callee, what: call.what, line: call.line };
      if (call.through) decisions.push({ file, at: call.at, messageId: 'sideEffectThrough', data: { ...data, through: chainText(call.through) } });
      else decisions.push({ file, at: call.at, messageId: 'sideEffect', data });
    }
    for (const call of facts.routineCalls) {
      const found = routineChain(chains, call.callee);
      if (!found || found.chain[0] === call.inRoutine) continue;
      // A callee that calls out only when its parameters pass a test: this call's arguments (or the defaults) must pass
      // it, as far as they are known here. An argument computed at run time is not known: unknown, stay quiet.
      if (found.onlyIf && !found.onlyIf.some((tests) => tests.every((t) => passes(t, argumentOf(found, call.args ?? [], t.parameter))))) continue;
      const data = { callee: call.callee, what: call.what, line: call.line, through: chainText(found.chain) };
      if (mode === 'project' && found.file !== file) {
        decisions.push({ file, at: call.at, messageId: 'sideEffectThroughRoutine', data: { ...data, defined: place(found.file, found.at, file) } });
      } else decisions.push({ file, at: call.at, messageId: 'sideEffectThrough', data });
    }
  }
  return decisions;
};

const parts = crossFileParts<Options, SideEffectFacts>(read, decide);

export default defineRule<Options, SideEffectFacts>({
  id: 'no-side-effects-in-locking-transaction',
  description: 'Disallow network calls and waits inside a transaction that has locked or written rows',
  messages: {
    sideEffect: `'{{callee}}' runs inside a transaction that has {{what}} rows (line {{line}}): ${HARM}`,
    sideEffectThrough: `'{{callee}}' calls {{through}}, and runs inside a transaction that has {{what}} rows (line {{line}}): ${HARM}`,
    sideEffectThroughRoutine: `'{{callee}}' (defined at {{defined}}) calls {{through}}, and runs inside a transaction that has {{what}} rows (line {{line}}): ${HARM}`,
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['sql', 'typescript', 'python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  // select_for_update / with_for_update: Django and SQLAlchemy ORM locks (the Python front end writes their SQL).
  // The functions that call out: a file of routines that only calls them lends the project pass its routines.
  // TRANSACTION_OPENED: a transaction handed to project functions that lock its rows in another module.
  triggers: [
    'for update', 'for no key update', 'for share', 'for key share', 'select_for_update', 'with_for_update', UPDATE_SET, DELETE_FROM, INSERT_INTO, MERGE_INTO,
    TRANSACTION_OPENED, 'http_get', 'http_post', 'http_put', 'http_patch', 'http_delete', 'http_head', /http\s*\(\s*\(/i, 'dblink', 'pg_sleep', /ai\.(?:openai|anthropic|cohere|ollama|voyageai|litellm)_/i,
  ],
  check: parts.check,
  collect: parts.collect,
  checkProject: parts.checkProject,
});

/** The chain after the callee, as the message says it: 'a', which calls 'http_post'. */
const chainText = (chain: string[]) => chain.slice(1).map((name) => `'${name}'`).join(', which calls ');

interface LockingStatement {
  start: number;
  end: number;
  /** Where it runs in its transaction's order: its own start, or the call that runs the project function it is in (`calledAt`). */
  order: number;
  /** That call's start, when it is in a project function walked at a call. */
  calledAt?: number;
  what: string;
  /** The routine definition it is in (where its CREATE starts), and the BEGIN ... EXCEPTION blocks it is protected by. */
  routineAt?: number;
  guardedBy?: readonly number[];
}

/** A call in the EXCEPTION handler of a block of a routine definition. */
interface Handler {
  block: number;
  routineAt: number;
}

/**
 * PL/pgSQL rolls a block's protected part back to its start before the handler runs (a subtransaction): the rows
 * its statements locked or wrote are released by then (`BEGIN ... FOR UPDATE NOWAIT ... EXCEPTION WHEN
 * lock_not_available THEN PERFORM pg_sleep(...)` waits holding none of them).
 */
function rolledBackFor(statement: LockingStatement, handler: Handler): boolean {
  return statement.routineAt === handler.routineAt && (statement.guardedBy ?? []).includes(handler.block);
}

/** For each transaction, its statements that lock or write rows, by position: one pass over the file. */
function lockingStatements(file: FileModel): Map<string, LockingStatement[]> {
  const byScope = new Map<string, LockingStatement[]>();
  // A project function's SQL run in the transaction a call hands it locks that transaction's rows (calledSites).
  const sites = [...file.sites, ...(file.calledSites ?? [])];
  // A TEMP table the file creates holds the session's own rows: writing or locking them holds nothing another session
  // waits on, and a rollback takes back only that scratch, as before any write (a log of what a routine did).
  const temporary = new Set(sites.flatMap((site) => site.analysis.statements.flatMap((s) => (s.createdTable?.temporary ? [s.createdTable.table] : []))));
  const scratch = (table: string) => temporary.has(table);
  for (const site of sites) {
    if (site.scope.kind !== 'transaction') continue;
    for (const statement of site.analysis.statements) {
      const locks = statement.lockingReads.some((read) => read.tables.length === 0 || !read.tables.every(scratch));
      const writes = statement.rowWrites.some((write) => !(write.schema === undefined && scratch(write.table)));
      if (!locks && !writes) continue;
      let list = byScope.get(site.scope.id);
      if (!list) byScope.set(site.scope.id, (list = []));
      const guardedBy = statement.plpgsql?.guardedBy;
      list.push({
        start: statement.span.start,
        end: statement.span.end,
        order: site.calledAt?.start ?? statement.span.start,
        ...(site.calledAt && { calledAt: site.calledAt.start }),
        what: locks ? 'locked' : 'written',
        ...(guardedBy?.length && statement.routine?.span ? { routineAt: statement.routine.span.start, guardedBy } : {}),
      });
    }
  }
  for (const list of byScope.values()) list.sort((a, b) => a.order - b.order || a.start - b.start);
  return byScope;
}

interface RoutineChain {
  /** From the routine (first) to the call that reaches the outside world. */
  chain: string[];
  /** The routine calls out only where one of these sets of tests of its parameters all pass. */
  onlyIf?: ParameterTest[][];
  parameters?: string[];
  defaults?: (SettingValue | undefined)[];
  /** Where the routine is defined. */
  file: string;
  at: Ref;
}

/**
 * The project's routines that call out, directly or through each other
 * (followed MAX_CALL_DEPTH calls deep): routine name -> its chain. A routine
 * defined in several files (a later migration replacing it) is read as the
 * last of them in path order, the one a fresh database ends with.
 */
function routinesCallingOut(files: readonly { file: string; facts: SideEffectFacts }[]): Map<string, RoutineChain> {
  const defined = new Map<string, { file: string; routine: RoutineFact }>();
  for (const { file, facts } of [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    for (const routine of facts.routines) defined.set(routine.name, { file, routine });
  }
  const chains = new Map<string, RoutineChain>();
  for (const [name, { file, routine }] of defined) {
    const direct = routine.calls.find(sqlSideEffect);
    if (direct) chains.set(name, { chain: [name, direct], file, at: routine.at });
    else if (routine.callsOnlyIf?.length) {
      const [first] = routine.callsOnlyIf;
      chains.set(name, {
        chain: [name, first.callee],
        file,
        at: routine.at,
        onlyIf: routine.callsOnlyIf.map((c) => c.onlyIf),
        ...(routine.parameters ? { parameters: routine.parameters } : {}),
        ...(routine.defaults ? { defaults: routine.defaults } : {}),
      });
    }
  }
  for (let depth = 1; depth < MAX_CALL_DEPTH; depth++) {
    let grew = false;
    for (const [name, { file, routine }] of defined) {
      if (chains.has(name)) continue;
      for (const callee of routine.calls) {
        const found = routineChain(chains, callee);
        // A chain of at most MAX_CALL_DEPTH calls, whatever order the pass meets the routines in. One that calls out
        // only for some arguments is not followed through a routine whose call's arguments are not read here.
        if (found && !found.onlyIf && found.chain[0] !== name && found.chain.length <= MAX_CALL_DEPTH) {
          chains.set(name, { chain: [name, ...found.chain], file, at: routine.at });
          grew = true;
          break;
        }
      }
    }
    if (!grew) break;
  }
  return chains;
}

/** The chain of a called routine: by its name as written, or by its bare name where the call or the definition leaves the schema out. */
function routineChain(chains: Map<string, RoutineChain>, called: string): RoutineChain | undefined {
  const exact = chains.get(called);
  if (exact) return exact;
  const bare = (name: string) => name.slice(name.lastIndexOf('.') + 1);
  for (const [name, chain] of chains) {
    if (bare(name) === bare(called) && (!name.includes('.') || !called.includes('.'))) return chain;
  }
  return undefined;
}

/** What a call passes for a parameter: its positional or named argument, else the parameter's default; undefined when not a literal. */
function argumentOf(routine: RoutineChain, args: readonly CallArgument[], parameter: string): SettingValue | undefined {
  const named = args.find((a) => a.name?.toLowerCase() === parameter);
  if (named) return named.value;
  const index = routine.parameters?.indexOf(parameter) ?? -1;
  if (index < 0) return undefined;
  const positional = args.filter((a) => !a.name);
  if (index < positional.length) return positional[index].value;
  return routine.defaults?.[index];
}

/** Whether a known literal passes the test as PostgreSQL's IF reads it (NULL passes none); false when not known. */
function passes(test: ParameterTest, value: SettingValue | undefined): boolean {
  if (value?.kind !== 'literal') return false;
  const v = value.value;
  if (v === null) return false;
  if (test.test === 'is not null') return true;
  if (test.test === 'is true') return asLevel(v) === true;
  const n = Number(v);
  if (Number.isNaN(n) || test.than === undefined) return false;
  return test.test === '>' ? n > test.than : test.test === '>=' ? n >= test.than : n !== test.than;
}
