import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a database or Redis server, for fault tests that must not
 * touch the shared server itself: point the application's DATABASE_URL (or REDIS_URL) at
 * {@link port}, then
 * - {@link cut}: destroy every connection and stop listening (new connections are refused);
 * - {@link blackhole}: keep accepting, but forward nothing either way (a hung network or database);
 * - {@link cutWhen}: destroy the one connection whose next client chunk matches, before forwarding it
 *   (e.g. a transaction's INSERT or COMMIT);
 * - {@link restore}: forward again (listening on the same port), dropping the stalled connections.
 */
export class TcpProxy {
  port = 0;
  /** Connections cut by a {@link cutWhen} rule so far. */
  cuts = 0;
  private mode: 'forward' | 'blackhole' | 'refuse' = 'forward';
  private trigger: ((chunk: Buffer) => boolean) | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Listens on a free port of 127.0.0.1; resolves with it. */
  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Destroys every connection and stops listening: connecting is refused until {@link restore}. */
  cut(): void {
    this.mode = 'refuse';
    this.server.close();
    this.dropAll();
  }

  /** Accepts connections but forwards nothing, on new and existing connections alike. */
  blackhole(): void {
    this.mode = 'blackhole';
  }

  /** Cuts the first connection whose client sends a chunk containing `text` (not forwarded), once. */
  cutWhen(text: string): void {
    this.trigger = (chunk) => chunk.includes(text);
  }

  /** Forwards again; connections stalled by {@link blackhole} are destroyed (their clients reconnect). */
  async restore(): Promise<void> {
    const wasBlackhole = this.mode === 'blackhole';
    this.mode = 'forward';
    if (wasBlackhole) this.dropAll();
    if (!this.server.listening) await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Stops everything (afterAll). */
  async stop(): Promise<void> {
    this.dropAll();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.track(client);
    if (this.mode !== 'forward') return; // refused ones never get here; a black hole holds them
    const upstream = net.connect(this.target.port, this.target.host);
    this.track(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    upstream.on('close', drop);
    client.on('data', (chunk: Buffer) => {
      if (this.mode !== 'forward') return;
      if (this.trigger?.(chunk)) {
        this.trigger = undefined;
        this.cuts += 1;
        drop();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.mode === 'forward') client.write(chunk);
    });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private dropAll(): void {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }
}
