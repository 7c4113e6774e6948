// The check itself: one SQL text read in one round trip, and the comparison
// of what it returns with the connection's values at connect.

/** Raw strings for every column: a pool's own type parsers must not change what we compare. */
export const RAW_TYPES = { getTypeParser: () => (value: unknown) => value };

export interface CheckPlan {
  names: readonly string[];
  /** One select-list expression per setting, then the open-transaction test. */
  columns: readonly string[];
  /** The settings only: used when the driver already knows the transaction status. */
  settingsSql: string;
  /** The settings and an open-transaction test, for drivers that do not report the status. */
  settingsAndTxSql: string;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * A custom setting (name with a dot) is read with missing_ok, since a
 * never-touched placeholder raises otherwise. A built-in name is read
 * without it, so a misspelt one fails loudly instead of always matching.
 */
export function makePlan(names: readonly string[]): CheckPlan {
  const columns = names.map((name) =>
    name.includes('.') ? `current_setting(${literal(name)}, true)` : `current_setting(${literal(name)})`,
  );
  // In an open transaction now() is its start; in a fresh implicit one it
  // equals the statement's start (F4). Only with the simple protocol: with
  // Parse/Bind/Execute the two differ even in autocommit, so the check
  // must never be sent with parameters.
  const tx = '(now() <> statement_timestamp())::text';
  return {
    names,
    columns: [...columns, tx],
    settingsSql: `select ${columns.join(', ')}`,
    settingsAndTxSql: `select ${columns.join(', ')}, ${tx}`,
  };
}

/** NULL and '' are the same "unset" (F9: a custom setting reads '' after its local transaction). */
export function normalize(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

/** Values at connect, taken from a check row. */
export function baselineFrom(plan: CheckPlan, row: readonly unknown[], adopted: boolean): string[] {
  // A connection opened before the guard wrapped the pool: custom settings
  // are compared with "unset"; a built-in's current value is all we have.
  return plan.names.map((name, i) => (adopted && name.includes('.') ? '' : normalize(row[i])));
}

/** Names whose current value differs from the value at connect. */
export function dirtyNames(plan: CheckPlan, row: readonly unknown[], baseline: readonly string[]): string[] {
  const dirty: string[] = [];
  for (let i = 0; i < plan.names.length; i++) {
    if (normalize(row[i]) !== baseline[i]) dirty.push(plan.names[i]!);
  }
  return dirty;
}

/** The open-transaction column of settingsAndTxSql. */
export function txOpenFrom(plan: CheckPlan, row: readonly unknown[]): boolean {
  const value = normalize(row[plan.names.length]);
  return value === 'true' || value === 't';
}

export function valuesOf(
  plan: CheckPlan,
  row: readonly unknown[],
  names: readonly string[],
): Record<string, string | null> {
  const values: Record<string, string | null> = {};
  for (const name of names) {
    const v = row[plan.names.indexOf(name)];
    values[name] = v === null || v === undefined ? null : normalize(v);
  }
  return values;
}
