import { LineIndex } from '../src/model/lines.ts';
import { defineRule } from '../src/model/index.ts';

type Options = Record<string, never>;

export default defineRule<Options>({
  id: 'no-release-in-open-transaction',
  description: 'Disallow releasing a pooled client while its transaction may still be open',
  messages: {
    noEnd:
      "This release() can be reached after the BEGIN at line {{line}} without COMMIT or ROLLBACK: node-postgres hands the connection to the next job still inside that transaction, with this job's locks, writes and local tenant setting (measured: the next checkout saw tenant 1's 20,000 rows). COMMIT or ROLLBACK on every path before releasing, or release(err) to destroy the connection.",
    errorPath:
      "When the job fails after the BEGIN at line {{line}}, this release() runs with the transaction still open — no path of the error rolls it back: node-postgres hands the connection to the next job inside that transaction, with this job's locks and local tenant setting (measured: the next checkout saw tenant 1's 20,000 rows). ROLLBACK in a catch before releasing, or pass the error to release(err) so the connection is destroyed.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['typescript'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  triggers: ['.release'],
  check({ file, report }) {
    if (file.releases.length === 0) return;
    const lines = new LineIndex(file.text);
    for (const release of file.releases) {
      const open = release.openTransaction;
      if (!open) continue;
      report({
        messageId: open.reason === 'no-end' ? 'noEnd' : 'errorPath',
        data: { line: lines.position(open.beginSpan.start).line },
        span: release.span,
      });
    }
  },
});
