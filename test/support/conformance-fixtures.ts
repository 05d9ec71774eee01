import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { serveHttp } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { connectHttpClient, type HttpClient } from "./http-fixture.js";
import type { FixtureOptions, Traffic } from "./in-memory-fixture.js";
import { PlainJsonClient, type Requestor } from "./plain-json-client.js";

/** One way of reaching the engine, as the conformance suites see it: the app and its requestors. */
export interface ConformanceFixture {
  app: TaskServer;
  client: Requestor;
  connectClient(capabilities?: ClientCapabilities): Promise<Requestor>;
  /** The wire log of `client` (default: the fixture's first client). */
  traffic(client?: Requestor): Traffic;
  /**
   * Resolves once the server has taken in every notification `client` sent so far, e.g. a
   * notifications/cancelled (over HTTP: each POST carrying no request has been answered; the SDK's
   * transport dispatches such messages before it answers 202).
   */
  heard(client?: Requestor): Promise<void>;
  close(): Promise<void>;
}

/** Counts a client's POSTs of notifications and responses (no request) still unanswered. */
class PostsInFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  readonly fetch: FetchLike = async (url, init) => {
    const post = init?.method === "POST" && !carriesRequest(init.body);
    if (post) this.count++;
    try {
      return await fetch(url, init);
    } finally {
      if (post && --this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
    }
  };

  none(): Promise<void> {
    return this.count === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

function carriesRequest(body: unknown): boolean {
  if (typeof body !== "string") return false;
  const parsed = JSON.parse(body) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]).some((m) => typeof m === "object" && m !== null && "method" in m && "id" in m);
}

const DEFAULT_CAPABILITIES: ClientCapabilities = { elicitation: {}, sampling: {} };

/** The demo server behind {@link serveHttp} on 127.0.0.1, port 0, with `sessions` as given. */
async function serveDemo(sessions: "local" | "shared", options: FixtureOptions) {
  const { setup, ...serverOptions } = options;
  const app = registerDemoTools(createTaskServer({ name: "test", version: "0.0.0", store: memoryStore(), ...serverOptions }));
  setup?.(app);
  const http = await serveHttp(app, { port: 0, host: "127.0.0.1", sessions });
  return { app, http };
}

/**
 * The demo server over Streamable HTTP with local or shared (signed) sessions, and official SDK
 * clients on StreamableHTTPClientTransport. A client's traffic is what its transport POSTed and
 * every message that arrived on any of its streams (POST answers and the GET stream), in arrival order.
 */
export async function httpSdkFixture(
  sessions: "local" | "shared",
  options: FixtureOptions = {},
  capabilities: ClientCapabilities = DEFAULT_CAPABILITIES,
): Promise<ConformanceFixture> {
  const { app, http } = await serveDemo(sessions, options);
  const connections = new Map<Requestor, HttpClient>();
  const unanswered = new Map<Requestor, PostsInFlight>();
  const connectClient = async (caps: ClientCapabilities = capabilities): Promise<Requestor> => {
    const posts = new PostsInFlight();
    const connection = await connectHttpClient(http.url, { capabilities: caps, fetch: posts.fetch });
    connections.set(connection.client, connection);
    unanswered.set(connection.client, posts);
    return connection.client;
  };
  const client = await connectClient();
  return {
    app,
    client,
    connectClient,
    traffic(c: Requestor = client): Traffic {
      const connection = connections.get(c);
      if (!connection) throw new Error("not a client of this fixture");
      const sent = connection.exchanges
        .filter((e) => e.method === "POST" && e.body !== undefined)
        .flatMap((e) => (Array.isArray(e.body) ? e.body : [e.body])) as JSONRPCMessage[];
      return { sent, received: connection.received.items.map((r) => r.message as JSONRPCMessage) };
    },
    heard(c: Requestor = client): Promise<void> {
      const posts = unanswered.get(c);
      if (!posts) throw new Error("not a client of this fixture");
      return posts.none();
    },
    async close() {
      for (const connection of connections.values()) await connection.close().catch(() => {});
      await http.close();
      await app.close();
    },
  };
}

/**
 * The demo server with shared sessions (where tasks/result, too, is answered as plain JSON) and
 * {@link PlainJsonClient}s: raw POSTs whose answers are one `application/json` body each.
 */
export async function plainJsonFixture(
  options: FixtureOptions = {},
  capabilities: ClientCapabilities = DEFAULT_CAPABILITIES,
): Promise<ConformanceFixture> {
  const { app, http } = await serveDemo("shared", options);
  const clients: PlainJsonClient[] = [];
  const connectClient = async (caps: ClientCapabilities = capabilities): Promise<Requestor> => {
    const connection = await PlainJsonClient.connect(http.url, caps);
    clients.push(connection);
    return connection;
  };
  const client = await connectClient();
  return {
    app,
    client,
    connectClient,
    traffic(c: Requestor = client): Traffic {
      const found = clients.find((candidate) => candidate === c);
      if (!found) throw new Error("not a client of this fixture");
      return found.traffic;
    },
    // The plain-JSON client awaits each POST it sends (and cancels none): nothing is left unanswered.
    heard: async () => {},
    async close() {
      for (const c of clients) await c.close();
      await http.close();
      await app.close();
    },
  };
}
