// .sql files: migrations, query files (pgtyped, sqlc, aiosql) and function
// definitions. Top-level statements run as the tool that loads the file
// decides ('script'), statements between BEGIN and COMMIT in one transaction,
// and statements of function bodies in the caller's transaction.
import { emptyFileModel, type Scope } from '../../model/index.ts';
import { analyzeSql } from '../../sql/index.ts';
import { collectLineComments } from '../comments.ts';
import type { FrontEnd } from '../types.ts';

export const sqlFrontEnd: FrontEnd = {
  language: 'sql',
  extensions: ['.sql'],
  parse(text, file) {
    const model = emptyFileModel(file, 'sql', text);
    if (text.includes('\u0000')) {
      model.fatal = { message: 'Not a text file: it contains NUL bytes.', span: { start: 0, end: 0 } };
      return model;
    }
    const analysis = analyzeSql(text);
    model.sqlErrors = analysis.errors;
    model.comments = collectLineComments(text, '--');
    let transaction: Scope | undefined;
    let transactions = 0;
    for (const statement of analysis.statements) {
      if (statement.transaction === 'begin') {
        transactions++;
        transaction = { kind: 'transaction', id: `${file}#tx${transactions}`, form: 'BEGIN', rollsBackOnError: true };
      }
      let scope: Scope = transaction ?? { kind: 'script' };
      if (statement.routine) {
        scope = { kind: 'transaction', id: `${file}#${statement.routine.name}`, form: `${statement.routine.kind} body`, rollsBackOnError: true };
      }
      model.sites.push({
        span: statement.span,
        analysis: { statements: [statement], errors: [] },
        scope,
        connection: { kind: 'unknown' },
        driver: 'sql',
      });
      if (statement.transaction === 'commit' || statement.transaction === 'rollback' || statement.transaction === 'prepare') {
        transaction = undefined;
      }
    }
    if (analysis.errors.length > 0 && analysis.statements.length === 0) {
      const first = analysis.errors[0];
      model.fatal = { message: `Parsing error: ${first.message}`, span: first.span };
    }
    return model;
  },
};
