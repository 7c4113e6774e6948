// Polling with a bound: a condition that never comes true fails the test with
// what it was waiting for, instead of hanging it.

export interface WaitOptions {
  /** What is awaited, for the error message. */
  what: string;
  /** Give up after this many ms (default 30 s: far above any wait on a loaded machine). */
  timeoutMs?: number;
  /** Pause between checks, in ms; 0 yields to the event loop once (setImmediate). */
  intervalMs?: number;
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, options: WaitOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 0;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${options.what}`);
    await new Promise((resolve) => (intervalMs > 0 ? setTimeout(resolve, intervalMs) : setImmediate(resolve)));
  }
}
