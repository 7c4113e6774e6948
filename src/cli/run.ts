// Process entry: wires main() to the real stdout/stderr.
import './wasm-tier.ts';
import { main } from './main.ts';

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTTY: Boolean(process.stdout.isTTY),
  stderrIsTTY: Boolean(process.stderr.isTTY),
  columns: process.stderr.columns,
  cwd: process.cwd(),
  env: process.env,
});
process.exitCode = code;
