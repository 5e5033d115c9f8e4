import net from 'node:net';

/**
 * A TCP proxy in front of a real service (PostgreSQL, Redis) that a test can cut and restore, to
 * simulate an outage without stopping the shared server other tests use. `cut()` destroys every
 * open connection and refuses new ones (they are accepted and closed at once); `restore()` lets
 * connections through again.
 */
export class TcpProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private down = false;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {
    this.server = net.createServer((client) => this.accept(client));
  }

  /** Starts a proxy on a free loopback port forwarding to `host:port`. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(host, port);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The proxy's own port. */
  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Forwards connections again. */
  restore(): void {
    this.down = false;
  }

  /** Stops the proxy and drops its connections. */
  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
