/** A real HTTP server on 127.0.0.1 that records what it receives and answers as a test says. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  at: number;
}

export interface HttpReceiver {
  url: string;
  port: number;
  received: Received[];
  /** Replaces how the next requests are answered. */
  answer(handler: (request: Received, response: ServerResponse) => void): void;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  /** TCP connections accepted so far. */
  connections(): number;
  /** Closes the connections that carry no request now (what a receiver's keep-alive timeout does). */
  closeIdleConnections(): void;
  close(): Promise<void>;
}

export async function httpReceiver(path = "/hook", port = 0): Promise<HttpReceiver> {
  const received: Received[] = [];
  let handler = (_request: Received, response: ServerResponse): void => {
    response.writeHead(204).end();
  };
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      received.push(request);
      for (const wake of waiters.splice(0)) wake();
      handler(request, res);
    });
  });
  let connections = 0;
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${bound}${path}`,
    port: bound,
    received,
    answer(next) {
      handler = next;
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${received.length}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 50);
        });
      }
      return received.slice(0, count);
    },
    connections: () => connections,
    closeIdleConnections: () => server.closeIdleConnections(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
