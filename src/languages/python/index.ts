// .py files: psycopg 3, psycopg_pool, psycopg2, SQLAlchemy, asyncpg and
// Django code, read with Lezer's Python grammar (no Python interpreter
// needed). The flow engine is in flow/, what each driver's API means in
// drivers/.
import { emptyFileModel } from '../../model/index.ts';
import { collectLineComments } from '../comments.ts';
import { PYTHON_EXTENSIONS } from '../extensions.ts';
import type { FrontEnd } from '../types.ts';
import { analyzePython } from './flow/file.ts';
import { parsePython } from './syntax.ts';

export const pythonFrontEnd: FrontEnd = {
  language: 'python',
  extensions: PYTHON_EXTENSIONS,
  parse(text, file, options) {
    const model = emptyFileModel(file, 'python', text);
    const parsed = parsePython(text);
    if (!parsed.ok) {
      // Python 2 (a vendored dependency's script) is valid in its own language: skipped with a warning, as a .sql file
      // in another database's SQL is; a file that is no valid Python at all is a fatal message.
      if (parsed.python2) model.skipped = { message: parsed.message, span: parsed.span, messageId: 'not-python3' };
      else model.fatal = { message: parsed.message, span: parsed.span };
      return model;
    }
    model.comments = collectLineComments(text, '#');
    analyzePython(model, parsed.tree, parsed.text, options);
    return model;
  },
};
