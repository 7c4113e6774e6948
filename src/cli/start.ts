// The CLI's program: main() wired to the real stdout and stderr. bin/pgq-audit.js runs it from the
// CommonJS bundle dist/cli/pgq-audit.cjs through launch.ts (which keeps V8's code for it between runs).
import { main } from './main.ts';

export async function start(): Promise<void> {
  const code = await main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    // Asked only when needed: the first touch of process.stdout or stderr makes its stream (a pipe's
    // loads node:net), about 45 M instructions, which a scan writing its report to a file never needs.
    get isTTY() {
      return Boolean(process.stdout.isTTY);
    },
    get stderrIsTTY() {
      return Boolean(process.stderr.isTTY);
    },
    get columns() {
      return process.stderr.columns;
    },
    cwd: process.cwd(),
    env: process.env,
  });
  process.exitCode = code;
}
