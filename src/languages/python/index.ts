// .py files: psycopg 3, psycopg_pool and psycopg2 code, read with Lezer's
// Python grammar (no Python interpreter needed).
import { emptyFileModel } from '../../model/index.ts';
import { collectLineComments } from '../comments.ts';
import { PYTHON_EXTENSIONS } from '../extensions.ts';
import type { FrontEnd } from '../types.ts';
import { analyzePython } from './analyze.ts';
import { parsePython } from './syntax.ts';

export const pythonFrontEnd: FrontEnd = {
  language: 'python',
  extensions: PYTHON_EXTENSIONS,
  parse(text, file, options) {
    const model = emptyFileModel(file, 'python', text);
    const parsed = parsePython(text);
    if (!parsed.ok) {
      model.fatal = { message: parsed.message, span: parsed.span };
      return model;
    }
    model.comments = collectLineComments(text, '#');
    analyzePython(model, parsed.tree, parsed.text, options);
    return model;
  },
};
