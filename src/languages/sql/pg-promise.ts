// pg-promise's query files (`new QueryFile(path)`): the library formats the
// file's variables before it sends the text, so they are holes of a .sql file,
// not PostgreSQL. What each form puts in is pg-promise's to say, kept here.

/**
 * pg-promise's query-file variables (a `QueryFile` is formatted before it is sent): a positional one with a
 * formatting filter (`$1:name`, `$1:raw`), and the named forms `$(name)`, `$<name>`, `$[name]`, `$/name/` with or
 * without one inside (`$(table:name)`; `${name}` is read as any template's). None is PostgreSQL as written (a bare
 * `$1` is, and is left to the parser). `:name`/`:alias` put a quoted name in, `:raw` any text, the others a value
 * or a list of values.
 */
const FILTER = '(?::(name|alias|raw|value|csv|list|json)\\b)';
const PG_PROMISE_VARIABLE = new RegExp(`^\\$(?:\\d+${FILTER}|\\([\\w.]+${FILTER}?\\)|<[\\w.]+${FILTER}?>|\\[[\\w.]+${FILTER}?\\]|\\/[\\w.]+${FILTER}?\\/)`);

/** What a variable at `i` puts in: its text, and whether that is a name (`:name`, `:alias`) or any text (`:raw`). */
export interface PgPromiseVariable {
  end: number;
  text: string;
  puts: 'name' | 'text' | 'value';
}

export function pgPromiseVariableAt(text: string, i: number): PgPromiseVariable | undefined {
  const match = PG_PROMISE_VARIABLE.exec(text.slice(i, i + 80));
  if (!match) return undefined;
  const filter = match.slice(1).find((f) => f !== undefined);
  const puts = filter === 'name' || filter === 'alias' ? 'name' : filter === 'raw' ? 'text' : 'value';
  return { end: i + match[0].length, text: match[0], puts };
}
