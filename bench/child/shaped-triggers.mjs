// A proposal, measured by the bench (not used by the rules): triggers shaped
// like the SQL statements the rules read, instead of the bare words 'update',
// 'delete', 'insert', 'merge', 'release' and 'set ', which most source files
// contain in prose or code ("update the cache", map.delete(), "set up").
// A space class that also takes the \n escapes of string literals.
const S = String.raw`(?:\s|\\[nrt])+`;
/** UPDATE [ONLY] name [[AS] alias] SET, the name possibly a template hole or a {} placeholder. */
const UPDATE_SET = new RegExp(String.raw`update${S}[^\s;]+${S}(?:(?:as${S})?[^\s;]+${S})?set(?:\s|\\[nrt])`, 'i');
const DELETE_FROM = new RegExp(String.raw`delete${S}from`, 'i');
const INSERT_INTO = new RegExp(String.raw`insert${S}into`, 'i');
const MERGE_INTO = new RegExp(String.raw`merge${S}into`, 'i');
/** SET [LOCAL|SESSION] name =|TO, SET ROLE, SET SESSION AUTHORIZATION. */
const SET_STATEMENT = new RegExp(String.raw`set${S}(?:(?:local|session)${S})?(?:role${S}|session${S}authorization|[^\s;]+(?:\s|\\[nrt])*(?:=|to(?:\s|\\[nrt])))`, 'i');

export const shapedTriggers = {
  'no-session-tenant-setting': ['set_config', SET_STATEMENT],
  'no-release-in-open-transaction': ['.release'],
  'no-side-effects-in-locking-transaction': ['for update', 'for no key update', 'for share', 'for key share', UPDATE_SET, DELETE_FROM, INSERT_INTO, MERGE_INTO],
  'require-claim-attempt-limit': [UPDATE_SET],
  'require-dead-sweep': [UPDATE_SET, DELETE_FROM],
  'require-fenced-finish': [UPDATE_SET, DELETE_FROM],
  'require-lease-heartbeat': [UPDATE_SET],
};

/** Replaces the triggers of the rules in `rules` (the dist/rules array) in place. */
export function applyShapedTriggers(rules) {
  for (const rule of rules) if (shapedTriggers[rule.id]) rule.triggers = shapedTriggers[rule.id];
}
