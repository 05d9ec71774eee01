/**
 * A TCP proxy between one process and PostgreSQL, for tests of a network that fails under a
 * worker: `cut()` destroys every connection through it (the process sees its connections drop and
 * reconnects at once), `pause()` holds every byte both ways without closing anything (a black hole:
 * writes go out and stall, nothing answers, new connections hang), `resume()` lets it all through
 * again in order.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

interface Pair {
  client: Socket;
  upstream: Socket;
  /** Bytes held while paused, per direction, in arrival order. */
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private paused = false;
  /** Connections accepted while paused: forwarded on resume. */
  private waiting: Socket[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards to `target` (a postgres:// URL or host:port). */
  static async start(target: string): Promise<TcpProxy> {
    const url = new URL(target.includes("://") ? target : `tcp://${target}`);
    const to = { host: url.hostname, port: Number(url.port || 5432) };
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const proxy = new TcpProxy(server, typeof address === "object" && address ? address.port : 0, to);
    server.on("connection", (client: Socket) => proxy.accept(client));
    return proxy;
  }

  /** `url` with its host and port replaced by this proxy's. */
  via(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = "127.0.0.1";
    proxied.port = String(this.port);
    return proxied.toString();
  }

  /** Connections open through the proxy now. */
  get connections(): number {
    return this.pairs.size;
  }

  /** Destroys every connection through the proxy (new ones are accepted as before). */
  cut(): void {
    for (const { client, upstream } of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    for (const client of this.waiting) client.destroy();
    this.waiting = [];
  }

  /** Holds every byte both ways and every new connection; nothing is closed. */
  pause(): void {
    this.paused = true;
  }

  /** Lets everything held through, in order, and forwards again. */
  resume(): void {
    this.paused = false;
    for (const pair of this.pairs) {
      for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
      for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
    }
    const waiting = this.waiting;
    this.waiting = [];
    for (const client of waiting) this.forward(client);
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    client.on("error", () => {});
    if (this.paused) {
      // Accepted by the kernel, never answered: the client's connect hangs until its own timeout.
      client.pause();
      this.waiting.push(client);
      return;
    }
    this.forward(client);
  }

  private forward(client: Socket): void {
    if (client.destroyed) return;
    const upstream = connect(this.target.port, this.target.host);
    const pair: Pair = { client, upstream, toUpstream: [], toClient: [] };
    this.pairs.add(pair);
    upstream.on("error", () => {});
    const end = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once("close", end);
    upstream.once("close", end);
    // Read on and hold what arrives while paused (not pipe(): it resumes a paused source on drain).
    client.on("data", (chunk: Buffer) => (this.paused ? pair.toUpstream.push(chunk) : upstream.write(chunk)));
    upstream.on("data", (chunk: Buffer) => (this.paused ? pair.toClient.push(chunk) : client.write(chunk)));
    client.resume();
  }
}
