/**
 * The stop-signal handlers `serveHttp` and `app.connect` over stdio install by default are the
 * process's own: one SIGINT and one SIGTERM listener however many servers run (a test file starts
 * dozens), removed when the last server closes, so the process stops on a signal as Node's
 * default does again. What a signal then does: test/e2e/embedded-server-signals.test.ts.
 */
import { PassThrough } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { serveHttp, type HttpHandle } from "../../src/http/http-server.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

function app(): TaskServer {
  const server = createTaskServer({ name: "signals", version: "0.0.0", store: memoryStore() });
  opened.push(server);
  return server;
}

async function serve(server: TaskServer, options: { handleSignals?: boolean } = {}): Promise<HttpHandle> {
  const http = await serveHttp(server, { port: 0, ...options });
  opened.push(http);
  return http;
}

const listeners = (): { SIGINT: number; SIGTERM: number } => ({
  SIGINT: process.listenerCount("SIGINT"),
  SIGTERM: process.listenerCount("SIGTERM"),
});
const plus = (base: { SIGINT: number; SIGTERM: number }, n: number): { SIGINT: number; SIGTERM: number } => ({
  SIGINT: base.SIGINT + n,
  SIGTERM: base.SIGTERM + n,
});

describe("stop-signal listeners", () => {
  it("several serveHttp servers in one process add one SIGINT and one SIGTERM listener, removed when the last is closed", async () => {
    const base = listeners();
    const one = await serve(app());
    const two = await serve(app());
    const three = await serve(app());
    expect(listeners()).toEqual(plus(base, 1));
    await one.close();
    await two.close();
    expect(listeners()).toEqual(plus(base, 1));
    await three.close();
    expect(listeners()).toEqual(base);
  });

  it("serveHttp with handleSignals: false adds no listener", async () => {
    const base = listeners();
    await serve(app(), { handleSignals: false });
    expect(listeners()).toEqual(base);
  });

  it("app.connect over stdio adds the listeners once, and app.close removes them", async () => {
    const base = listeners();
    const server = app();
    await server.connect(new StdioServerTransport(new PassThrough(), new PassThrough()));
    await server.connect(new StdioServerTransport(new PassThrough(), new PassThrough()));
    expect(listeners()).toEqual(plus(base, 1));
    await server.close();
    expect(listeners()).toEqual(base);
  });

  it("app.connect over another transport, or with handleSignals: false, adds no listener", async () => {
    const base = listeners();
    const server = app();
    await server.connect(new StdioServerTransport(new PassThrough(), new PassThrough()), undefined, { handleSignals: false });
    const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    expect(listeners()).toEqual(base);
  });
});
