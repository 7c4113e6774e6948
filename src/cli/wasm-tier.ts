// The CLI's one V8 setting, made before libpg-query's wasm is compiled: run
// the parser on Liftoff, V8's baseline wasm compiler, and never tier it up to
// TurboFan. With the default dynamic tiering, the parser's hot functions are
// recompiled by TurboFan while a scan is young: parsing 1,500 small
// migrations (0.5 MB) took 310-340 ms of CPU in a fresh process, 95-115 ms on
// Liftoff alone; TurboFan's code is faster only after several MB of SQL,
// more than most projects hold. Set in the CLI only: a program that loads the
// ESLint plugin or the API keeps its own V8 settings. Made when the wasm is
// about to be compiled (src/before-wasm.ts): node:v8 is loaded only then.
import { createRequire } from 'node:module';
import { beforeWasm } from '../before-wasm.ts';

beforeWasm(() => {
  const v8 = createRequire(import.meta.url)('node:v8') as typeof import('node:v8');
  v8.setFlagsFromString('--liftoff-only');
});
