// typescript-eslint's RuleTester on node:test, with the SQL parser loaded
// (the plugin entry does it; rules are synchronous).
import { after, describe, it } from 'node:test';
import { RuleTester } from '@typescript-eslint/rule-tester';
import plugin from '../../src/eslint/index.ts';

RuleTester.afterAll = after;
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

export const ruleTester = new RuleTester();
/** The plugin's rule (rule-tester pins its own copy of @typescript-eslint/utils, hence the cast). */
export const pgqRule = (id: string): Parameters<RuleTester['run']>[1] => {
  const rule = plugin.rules[id];
  if (!rule) throw new Error(`no ESLint rule pgq/${id}`);
  return rule as unknown as Parameters<RuleTester['run']>[1];
};
