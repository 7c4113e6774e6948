// Process entry: wires main() to the real stdout/stderr.
import { main } from './main.ts';

const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTTY: Boolean(process.stdout.isTTY),
  cwd: process.cwd(),
});
process.exitCode = code;
