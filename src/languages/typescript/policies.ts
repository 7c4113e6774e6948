// Drizzle's row-level security declared in the schema: `pgPolicy('name', {
// as, for, to, using: sql`...`, withCheck: sql`...` })` in a pgTable's extra
// config, and `.enableRLS()`. drizzle-kit turns them into CREATE POLICY and
// ALTER TABLE ... ENABLE ROW LEVEL SECURITY; that text, written here with
// each clause mapped to its code, goes through the analyzer, so the policy's
// setting reads and casts are read like those of a migration.
import type { TSESTree } from '@typescript-eslint/typescript-estree';
import { HostTextBuilder, type HostText } from '../host-text.ts';
import { templateText } from './strings.ts';
import { objectProperty, stringValue, unwrap, type Node } from './syntax.ts';

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function policyText(call: TSESTree.CallExpression, table: string, enableRls: boolean, source: string): HostText | undefined {
  const out = new HostTextBuilder();
  const at = (text: string, node: { range: [number, number] }) => out.push(text, node.range[0], node.range[1]);
  if (enableRls) {
    at(`ALTER TABLE ${quote(table)} ENABLE ROW LEVEL SECURITY`, call);
    return out.done({ start: call.range[0], end: call.range[1] });
  }
  const name = stringValue(call.arguments[0] as Node | undefined);
  const options = unwrap(call.arguments[1] as Node | undefined);
  if (!name) return undefined;
  at(`CREATE POLICY ${quote(name)} ON ${quote(table)}`, call);
  if (options?.type === 'ObjectExpression') {
    const as = stringValue(objectProperty(options, 'as')?.value as Node | undefined);
    if (as === 'permissive' || as === 'restrictive') at(` AS ${as.toUpperCase()}`, objectProperty(options, 'as')!);
    const command = stringValue(objectProperty(options, 'for')?.value as Node | undefined);
    if (command && /^(all|select|insert|update|delete)$/.test(command)) at(` FOR ${command.toUpperCase()}`, objectProperty(options, 'for')!);
    for (const [key, clause] of [['using', 'USING'], ['withCheck', 'WITH CHECK']] as const) {
      const property = objectProperty(options, key);
      const value = property ? unwrap(property.value as Node) : undefined;
      if (value?.type !== 'TaggedTemplateExpression') continue;
      at(` ${clause} (`, property!);
      // The condition's text mapped to the template; an interpolation (a column, a value) is a hole.
      const condition = templateText(value.quasi, source);
      if (!condition) return undefined;
      out.append(condition);
      at(')', property!);
    }
  }
  return out.done({ start: call.range[0], end: call.range[1] });
}
