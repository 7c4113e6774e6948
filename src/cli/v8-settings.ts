// The CLI's V8 settings, made by launch.ts before any of the CLI's own code is compiled (V8 keys
// the code it caches by its settings: made later, they would void that cache on every run):
//
// - Run the parser on Liftoff, V8's baseline wasm compiler, and never tier it
//   up to TurboFan. With the default dynamic tiering, the parser's hot
//   functions are recompiled by TurboFan while a scan is young: parsing 1,500
//   small migrations (0.5 MB) took 310-340 ms of CPU in a fresh process,
//   95-115 ms on Liftoff alone; TurboFan's code is faster only after several
//   MB of SQL, more than most projects hold.
// - Let JS functions run about four times as long (their interrupt budget,
//   66 KB of bytecode by default in Node 20) before V8 decides to optimize
//   them. A cold scan is
//   young code all through: TurboFan compiling the analysis (Lezer's parser,
//   the front ends' walks, the SQL facts) was a third of a cold scan's
//   instructions on the bench's Python shape, and many of the functions it
//   compiled early ran too little afterwards to pay for it. 260 KB leaves the functions that stay hot optimized (compiling nothing at all
//   took 2.7 times the instructions) and compiles fewer of the others: the
//   Python shape's cold scan 5.9-6.2 -> 5.2 G instructions, the monorepo's
//   7.6 -> 6.2 G (3 times the default gave 5.4 G on the Python shape, 6 and
//   8 times 5.6 G: the code that stays hot then runs too long unoptimized).
//
// Set in the CLI only: a program that loads the ESLint plugin or the API
// keeps its own V8 settings. Loading node:v8 costs about 35 M instructions, which
// the code cache saves several times over (launch.ts).
import { createRequire } from 'node:module';

/** Bytecode a function runs before V8 considers optimizing it (Node 20's default: 66 KB). */
const INTERRUPT_BUDGET = 260 * 1024;

/** Makes the CLI's V8 settings; the worker threads share them (they are the process's). */
export function setCliV8Settings(): void {
  const v8 = createRequire(import.meta.url)('node:v8') as typeof import('node:v8');
  v8.setFlagsFromString('--liftoff-only');
  v8.setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}
