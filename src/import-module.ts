// import() of a package (or a file URL) for code that may run in the CLI's CommonJS bundle. That
// bundle runs in vm.Script (src/cli/code-cache.ts), where Node 20 finds no import callback for
// code compiled from V8's cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), and its experimental
// main-context loader option prints a warning: launch.ts, an ES module of dist/cli (specifiers
// resolve from the same folder), lends its own import() instead.
const LENT = Symbol.for('pgq-audit.import');

type Importer = (specifier: string) => Promise<unknown>;

/** Called by launch.ts before the bundle runs. */
export function lendImport(importer: Importer): void {
  (globalThis as Record<symbol, unknown>)[LENT] = importer;
}

export function importModule<T>(specifier: string): Promise<T> {
  const lent = (globalThis as Record<symbol, unknown>)[LENT] as Importer | undefined;
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
