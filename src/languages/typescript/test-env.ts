// Branches that run only under a test runner. Node's convention names the
// environment in NODE_ENV (or a config's `env` read from it), and test runners
// set it to 'test': code that picks its SQL by it (`process.env.NODE_ENV ===
// 'test' ? '' : 'FOR UPDATE SKIP LOCKED'`, `if (config.env === 'test') return
// base;`) sends the other text in production, and that is the text to judge.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { propertyName, unwrap, type Node } from './syntax.ts';

/** The names an environment's name is read under: `process.env.NODE_ENV`, `config.env`, `settings.environment`. */
const ENV_NAMES = new Set(['NODE_ENV', 'env', 'nodeEnv', 'environment']);

function namesEnvironment(n: Node | undefined): boolean {
  const node = unwrap(n);
  if (node?.type === 'Identifier') return node.name === 'NODE_ENV';
  if (node?.type !== 'MemberExpression') return false;
  const name = propertyName(node);
  return name !== undefined && ENV_NAMES.has(name);
}

const isTestLiteral = (n: Node | undefined) => {
  const node = unwrap(n);
  return node?.type === 'Literal' && node.value === 'test';
};

/**
 * For a condition that compares the environment's name with 'test': which
 * branch runs outside tests ('alternate' for `=== 'test'`, 'consequent' for
 * `!== 'test'`). Undefined for any other condition.
 */
export function productionBranch(test: Node | null | undefined): 'consequent' | 'alternate' | undefined {
  const n = unwrap(test);
  if (n?.type !== 'BinaryExpression') return undefined;
  const compares = (namesEnvironment(n.left as Node) && isTestLiteral(n.right)) || (namesEnvironment(n.right) && isTestLiteral(n.left as Node));
  if (!compares) return undefined;
  if (n.operator === '===' || n.operator === '==') return 'alternate';
  if (n.operator === '!==' || n.operator === '!=') return 'consequent';
  return undefined;
}

/** A statement that returns only under tests: `if (env === 'test') return x;` (no else). */
function testOnlyReturn(s: TSESTree.Statement): boolean {
  if (s.type !== 'IfStatement' || s.alternate || productionBranch(s.test as Node) !== 'alternate') return false;
  const body = s.consequent.type === 'BlockStatement' && s.consequent.body.length === 1 ? s.consequent.body[0] : s.consequent;
  return body.type === 'ReturnStatement';
}

/**
 * What a block returns when that is one expression outside tests: its single
 * return as its last statement, once returns that only run under tests are
 * set aside.
 */
export function productionReturn(body: readonly TSESTree.Statement[]): Node | undefined {
  const kept = body.filter((s) => !testOnlyReturn(s));
  const returns = kept.filter((s): s is TSESTree.ReturnStatement => s.type === 'ReturnStatement');
  return returns.length === 1 && kept[kept.length - 1] === returns[0] ? (unwrap(returns[0].argument as Node | null) ?? undefined) : undefined;
}
