// A setting the CLI makes for libpg-query's wasm (cli/wasm-tier.ts), made
// just before the wasm is first compiled rather than when the CLI starts: a
// scan served from the cache, or with nothing to analyse, never compiles it,
// and loading node:v8 to make the setting cost some 37M instructions (3% of
// a cached scan of 1,500 files). The SQL parser's loaders and the worker pool
// (its threads compile the wasm too, under the same process-wide setting)
// run the setup first. A program that never registers one keeps its own V8
// settings.

let setup: (() => void) | undefined;

/** What to run once before the wasm is first compiled (the CLI's one V8 setting). */
export function beforeWasm(run: () => void): void {
  setup = run;
}

/** Runs the registered setup, once. */
export function prepareWasm(): void {
  const run = setup;
  setup = undefined;
  run?.();
}
