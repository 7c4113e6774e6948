export { lintDatabase, analyseObjects, DEFAULT_CONNECT_TIMEOUT, DEFAULT_STATEMENT_TIMEOUT, type LintDatabaseOptions, type LintDatabaseResult, type LintDatabaseStats } from './lint.ts';
export { DatabaseError, loadPg, withReadOnlySession, describeTarget, type ConnectOptions, type Session, type Target } from './connection.ts';
export { readCatalog, type CatalogOptions, type CatalogSnapshot } from './catalog.ts';
export { catalogObjects, quoteIdent, type DbObject } from './objects.ts';
