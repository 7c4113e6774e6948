// Names as SQL needs them written, for statements a message suggests and
// texts pgq-audit builds (`pgq-audit db`'s object texts).

const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_$]*$/;

/** An identifier as SQL needs it written: bare when it can be, else double-quoted. */
export function quoteIdent(name: string): string {
  return PLAIN_IDENTIFIER.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** A setting name: dotted custom names stay dotted (app.tenant), anything odder is one quoted identifier. */
export function quoteSettingName(name: string): string {
  return name.split('.').every((part) => PLAIN_IDENTIFIER.test(part)) ? name : `"${name.replace(/"/g, '""')}"`;
}
