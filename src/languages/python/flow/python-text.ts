// The text of a Python string expression as the driver sends it, with what
// the Python readers add to the shared HostText (strings.ts builds it; the
// dict reading of sql-dicts.ts passes it on).
import type { HostText as BaseHostText } from '../../host-text.ts';
import type { Node } from '../syntax.ts';

export interface HostText extends BaseHostText {
  /** The text passed through psycopg.sql.SQL(). */
  composed: boolean;
  /** The text passed through SQLAlchemy's text(): its placeholders are `:name`. */
  colonParams?: boolean;
  /**
   * `{}` fields of a psycopg.sql template left in the text because their
   * argument could not be read (text offset of the `{` -> the argument).
   */
  formatArgs?: Map<number, Node>;
  /** Values given to text(...).bindparams(name=value). */
  boundParams?: Map<string, Node>;
}
