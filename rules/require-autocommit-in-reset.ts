import { defineRule, type SqlSite } from '../src/model/index.ts';

export default defineRule({
  id: 'require-autocommit-in-reset',
  description: 'Require pool reset and configure callbacks to leave the connection outside a transaction',
  messages: {
    leftInTransaction:
      "The pool's {{role}} callback {{callback}} runs this in a transaction it does not commit: psycopg_pool finds the connection INTRANS after it and discards it, so every returned connection is closed and a new one opened (21 connections for 20 jobs), and the reset never takes effect. Set conn.autocommit = True before executing (and back to False after), or call conn.commit() before returning.",
    configureLeftInTransaction:
      "The pool's configure callback {{callback}} runs this in a transaction it does not commit: psycopg_pool refuses the new connection (connection left in status INTRANS by configure function) and the pool cannot open any. Set conn.autocommit = True before executing, or call conn.commit() before returning.",
    discardInTransaction:
      "DISCARD ALL runs in the transaction psycopg opens (autocommit is off in the {{role}} callback {{callback}}): it fails with DISCARD ALL cannot run inside a transaction block, and psycopg_pool closes the connection. Set conn.autocommit = True before it, or reset only what the job set (RESET app.tenant) and commit.",
  },
  defaultSeverity: 'error',
  recommended: true,
  languages: ['python'],
  schema: { type: 'object', properties: {}, additionalProperties: false },
  defaultOptions: {},
  triggers: ['reset', 'configure'],
  check({ file, report }) {
    for (const config of file.connections) {
      for (const callback of config.callbacks) {
        if (callback.role === 'check' || !callback.resolved) continue;
        const sites = file.sites.filter((s) => s.callback?.configId === config.id && s.callback.role === callback.role);
        const data = { role: callback.role, callback: callback.name };
        const reported = new Set<number>();
        for (const site of sites) {
          if (site.scope.kind !== 'transaction') continue;
          for (const statement of site.analysis.statements) {
            if (statement.discard !== 'all') continue;
            report({ messageId: 'discardInTransaction', data, span: statement.span });
            reported.add(site.span.start);
          }
        }
        if (callback.endsOutsideTransaction !== false) continue;
        const at = callback.leavesTransactionAt ?? firstInTransaction(sites)?.span ?? callback.span;
        if (sites.some((s) => reported.has(s.span.start) && s.span.start >= at.start && s.span.end <= at.end)) continue;
        report({ messageId: callback.role === 'configure' ? 'configureLeftInTransaction' : 'leftInTransaction', data, span: at });
      }
    }
  },
});

function firstInTransaction(sites: SqlSite[]): SqlSite | undefined {
  return sites.filter((s) => s.scope.kind === 'transaction').sort((a, b) => a.span.start - b.span.start)[0];
}
