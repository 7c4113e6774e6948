// What a walk at a call that hands a project function the caller's
// transaction keeps apart from the function's own walk (helper-calls.ts):
// where its sites go, and what its calls make of the handle it was handed.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import type { SqlSite } from '../../../model/index.ts';
import type { Span } from '../../../sql/index.ts';
import type { Node } from '../syntax.ts';
import type { TsFile } from './file.ts';
import type { Value } from './types.ts';

/** Where a walk at a call records the SQL it sends in the caller's transaction. */
export interface Adoption {
  /** The caller's file: the sites are its. */
  into: TsFile;
  /** The outermost call that runs them, in the caller's file. */
  call: Span;
  /** The function is another module's: every span of its sites is moved to the call. */
  foreign: boolean;
  /** The call hands a handle outside any transaction from a catch (helper-calls.ts): its autocommit SQL is recorded too. */
  autocommit?: boolean;
  /** The call hands, from a catch, a client whose transaction may still be open: its SQL there is recorded with the transactions it may be in. */
  mayBeOpen?: boolean;
  /** The sites recorded so far (what the call did, for whether it is the job's work). */
  sites: SqlSite[];
  /** What a call of the function makes from the handle it was handed (see handleMadeOf), for this walk. */
  made(call: TSESTree.CallExpression, make: () => Value | undefined): Value | undefined;
}

/**
 * Whether what a call makes may come of the handle the function is handed
 * (`manager.getRepository(Job)`, `trx('jobs')`): the function's own walk kept
 * what it made of its parameter; a walk at a call makes it again of what the
 * call hands. Pools and connections it makes are made once (file.made).
 */
export function handleMadeOf(made: ReadonlyMap<Node, Value | undefined>, call: TSESTree.CallExpression): boolean {
  const known = made.get(call);
  return !known || known.kind === 'tx' || known.kind === 'opaque' || known.kind === 'builder' || (known.kind === 'pool' && (known.orTx === true || known.param !== undefined));
}

/** A memory of what calls make, for one walk at a call. */
export function madeMemory(): Adoption['made'] {
  const memory = new Map<Node, Value | undefined>();
  return (call, make) => {
    if (!memory.has(call)) memory.set(call, make());
    return memory.get(call);
  };
}
