// What a text's leading transaction-control statement does, read from its
// words without a parse: for front ends that follow a connection's state on a
// path where they do not analyse the SQL (a silent re-walk). ROLLBACK TO
// SAVEPOINT stays in the transaction; ... AND CHAIN ends it and opens the next.
import type { TransactionEffect } from './facts.ts';

const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

export function transactionEffectOfText(text: string): TransactionEffect {
  const words = text
    .slice(LEADING.exec(text)?.[0].length ?? 0, 200)
    .split(/[\s;(]+/, 6)
    .map((w) => w.toLowerCase());
  const [first, second, third] = words;
  const chained = () => {
    const rest = words.slice(1).filter((w) => w !== 'work' && w !== 'transaction');
    return rest[0] === 'and' && rest[1] === 'chain';
  };
  switch (first) {
    case 'begin':
      return 'opens';
    case 'start':
      return second === 'transaction' ? 'opens' : 'none';
    case 'commit':
    case 'end':
      if (first === 'commit' && second === 'prepared') return 'none';
      return chained() ? 'ends-and-opens' : 'ends';
    case 'rollback':
    case 'abort':
      if (first === 'rollback' && (second === 'prepared' || second === 'to' || third === 'to')) return 'none';
      return chained() ? 'ends-and-opens' : 'ends';
    case 'prepare':
      return second === 'transaction' ? 'ends' : 'none';
    default:
      return 'none';
  }
}
