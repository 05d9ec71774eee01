/**
 * A TCP proxy in front of an HTTP server that loses one answer: the first request whose bytes
 * contain `request` goes through to the server, and once the server's answer contains `answer`
 * (the request has been acted on), the connection is destroyed both ways instead of delivering
 * it. The client sees its connection dropped after the server committed the request; everything
 * else passes untouched.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export class DroppingProxy {
  /** Answers lost so far (0 or 1). */
  drops = 0;
  /** Requests seen carrying the request mark (each within one read of the socket). */
  requests = 0;
  private armed = true;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly marks: { request: string; answer: string },
    private readonly serverHost: string,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards to the server of `target` (a URL); `url` is `target` through the proxy. */
  static async start(target: string, marks: { request: string; answer: string }): Promise<DroppingProxy> {
    const to = new URL(target);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const via = new URL(target);
    via.hostname = "127.0.0.1";
    via.port = String(typeof address === "object" && address ? address.port : 0);
    const proxy = new DroppingProxy(server, via.href, marks, to.host);
    server.on("connection", (client: Socket) => proxy.forward(client, to.hostname, Number(to.port)));
    return proxy;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /**
   * The request's Host header names the server, as a reverse proxy sends it: the server checks it
   * against its own address (DNS rebinding protection).
   */
  private withServerHost(chunk: Buffer): Buffer {
    const text = chunk.toString("latin1");
    const proxied = new URL(this.url).host;
    const replaced = text.replace(new RegExp(`\r\nhost: ${proxied.replace(/\./g, "\\.")}\r\n`, "i"), `\r\nhost: ${this.serverHost}\r\n`);
    return replaced === text ? chunk : Buffer.from(replaced, "latin1");
  }

  private forward(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    this.sockets.add(client).add(upstream);
    client.on("error", () => {});
    upstream.on("error", () => {});
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.once("close", end);
    upstream.once("close", end);
    // Per connection: whether it carries the request to lose the answer of, and that answer so far.
    let sent = "";
    let losing = false;
    let held = "";
    client.on("data", (chunk: Buffer) => {
      if (chunk.includes(this.marks.request, 0, "latin1")) this.requests++;
      if (this.armed && !losing) {
        sent += chunk.toString("latin1");
        if (sent.includes(this.marks.request)) {
          losing = true;
          this.armed = false;
        } else sent = sent.slice(-this.marks.request.length);
      }
      upstream.write(this.withServerHost(chunk));
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!losing) {
        client.write(chunk);
        return;
      }
      held += chunk.toString("latin1");
      if (held.includes(this.marks.answer)) {
        this.drops++;
        end();
      }
    });
  }
}
