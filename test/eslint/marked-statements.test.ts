// Statements a module marks `/* sql */` for another package to send: in ESLint
// (one file) the heartbeat and the finish that match the job by id only are
// reported, unless the module also locks the job by its id (the package reads
// it under that lock and may compare the holder before it writes).
import { pgqRule, ruleTester } from './rule-tester.ts';

const claim = `import { statement } from './kit';
export const claim = statement(/* sql */ \`UPDATE {{schema}}.tasks SET state = 'busy', tries = tries + 1, held_by = $1, held_until = now() + interval '1 minute'
  WHERE id = (SELECT id FROM {{schema}}.tasks WHERE (state = 'new' OR (state = 'busy' AND held_until < now())) AND tries < max_tries
  LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id\`, {});
export const bury = statement(/* sql */ \`UPDATE {{schema}}.tasks SET state = 'dead' WHERE state = 'busy' AND held_until < now() AND tries >= max_tries\`, {});
`;
const beat = `export const beat = statement(/* sql */ \`UPDATE {{schema}}.tasks SET held_until = now() + interval '1 minute' WHERE id = $1\`, {});\n`;
const done = `export const done = statement(/* sql */ \`UPDATE {{schema}}.tasks SET state = 'done' WHERE id = $1\`, {});\n`;
const lock = `export const lock = statement(/* sql */ \`SELECT * FROM {{schema}}.tasks WHERE id = $1 FOR UPDATE\`, {});\n`;

ruleTester.run('require-lease-heartbeat', pgqRule('require-lease-heartbeat'), {
  valid: [`${claim}${lock}${beat}`],
  invalid: [{ code: `${claim}${beat}`, errors: [{ messageId: 'unfencedHeartbeat', line: 6, column: 117 }] }],
});

ruleTester.run('require-fenced-finish', pgqRule('require-fenced-finish'), {
  valid: [`${claim}${lock}${done}`],
  invalid: [{ code: `${claim}${done}`, errors: [{ messageId: 'unfenced', line: 6, column: 91 }] }],
});
