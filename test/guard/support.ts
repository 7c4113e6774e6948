// Test support for the guard: a TCP proxy between the pool and PostgreSQL, so
// a fault can be put at an exact point of the protocol (the check query)
// instead of racing a timer. Faults are real: backends are really
// terminated; the proxy only decides when the client hears about it.
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { waitUntil } from '../helpers/wait.ts';

interface Pair {
  client: Socket;
  server: Socket;
  held: Buffer[];
  serverClosed: boolean;
  /** Server bytes not yet framed into whole protocol messages. */
  partial: Buffer;
}

export class PgProxy {
  /** Buffer server-to-client bytes instead of forwarding them (the client hears nothing). */
  hold = false;
  /** Close new connections at once, as a server that is down would. */
  refuse = false;
  /** ReadyForQuery ('Z') messages the server sent: each round trip, simple or extended, ends with exactly one. */
  roundTrips = 0;
  /** Start holding at the next ReadyForQuery ('Z') message from the server. */
  private holdAtReadyForQuery = false;
  /** Run once on the next client-to-server chunk of an established connection, before it is forwarded. */
  private interceptNext: ((pair: Pair) => Promise<'forward' | 'drop'>) | undefined;
  private readonly pairs = new Set<Pair>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetUrl: string): Promise<PgProxy> {
    const target = new URL(targetUrl);
    const host = target.hostname;
    const port = Number(target.port || 5432);
    let proxy!: PgProxy;
    const server = createServer((client) => proxy.accept(client, host, port));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    proxy = new PgProxy(server, typeof address === 'object' && address ? address.port : 0);
    return proxy;
  }

  /** The same connection string, through the proxy. */
  url(connectionString: string): string {
    const url = new URL(connectionString);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  get openServerSockets(): number {
    let n = 0;
    for (const pair of this.pairs) if (!pair.serverClosed) n++;
    return n;
  }

  /**
   * Delivers everything up to the next ReadyForQuery and holds from there:
   * the client sees an ErrorResponse but not the status that follows it.
   */
  holdNextReadyForQuery(): void {
    this.holdAtReadyForQuery = true;
  }

  /** Swallows the next query a client sends: the client waits for an answer forever. */
  stallNextQuery(): void {
    this.interceptNext = async () => 'drop';
  }

  /** Runs `action` (e.g. pg_terminate_backend) when the next query arrives, then waits for the server to close that socket. */
  beforeNextQuery(action: () => Promise<void>): void {
    this.interceptNext = async (pair) => {
      await action();
      if (!pair.serverClosed) await new Promise((resolve) => pair.server.once('close', resolve));
      return 'drop';
    };
  }

  /** Resolves once every server-side socket has closed (after terminating the backends). */
  async serverSocketsClosed(): Promise<void> {
    await waitUntil(() => this.openServerSockets === 0, { what: 'the server to close every proxied socket', intervalMs: 5 });
  }

  /** Messages held back so far, over every connection. */
  get heldMessages(): number {
    let n = 0;
    for (const pair of this.pairs) n += pair.held.length;
    return n;
  }

  /**
   * Stops holding: delivers what was held, and the closes that were held back.
   * With oneChunk, a connection's held messages go out in one write, so the
   * client parses them in one 'data' event (as when they share a TCP packet).
   */
  release(options: { oneChunk?: boolean } = {}): void {
    // The ReadyForQuery may not have come yet: then it must not be held later.
    this.holdAtReadyForQuery = false;
    this.hold = false;
    for (const pair of this.pairs) {
      const held = pair.held.splice(0);
      if (options.oneChunk && held.length > 0) pair.client.write(Buffer.concat(held));
      else for (const message of held) pair.client.write(message);
      if (pair.serverClosed) pair.client.end();
    }
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.server.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.refuse) {
      client.destroy();
      return;
    }
    const server = tcpConnect(port, host);
    // Without this, Nagle's algorithm and delayed ACKs add ~40 ms to each
    // small message the proxy relays.
    client.setNoDelay(true);
    server.setNoDelay(true);
    const pair: Pair = { client, server, held: [], serverClosed: false, partial: Buffer.alloc(0) };
    this.pairs.add(pair);
    let started = false;
    client.on('data', (chunk) => {
      if (pair.serverClosed) {
        // The server went away while the client was idle: deliver what it
        // said (the FATAL message) and the close, as the kernel would have.
        for (const held of pair.held.splice(0)) client.write(held);
        client.end();
        return;
      }
      const intercept = started ? this.interceptNext : undefined;
      started = true;
      if (!intercept) {
        server.write(chunk);
        return;
      }
      this.interceptNext = undefined;
      client.pause();
      void intercept(pair).then((verdict) => {
        if (verdict === 'forward' && !pair.serverClosed) server.write(chunk);
        client.resume();
      });
    });
    server.on('data', (chunk) => {
      // Frame the stream into messages (type byte, int32 length) so holding
      // can start at an exact message.
      let buffer = pair.partial.length ? Buffer.concat([pair.partial, chunk]) : chunk;
      while (buffer.length >= 5) {
        const size = 1 + buffer.readInt32BE(1);
        if (buffer.length < size) break;
        const message = buffer.subarray(0, size);
        buffer = buffer.subarray(size);
        if (message[0] === 0x5a) this.roundTrips++;
        if (this.holdAtReadyForQuery && message[0] === 0x5a) {
          this.holdAtReadyForQuery = false;
          this.hold = true;
        }
        if (this.hold) pair.held.push(Buffer.from(message));
        else client.write(message);
      }
      pair.partial = Buffer.from(buffer);
    });
    const serverGone = () => {
      if (pair.serverClosed) return;
      pair.serverClosed = true;
      if (!this.hold) client.end();
    };
    server.on('close', serverGone);
    server.on('error', serverGone);
    client.on('error', () => server.destroy());
    client.on('close', () => {
      server.destroy();
      this.pairs.delete(pair);
    });
  }
}

export { prng as seeded } from '../helpers/prng.ts';
