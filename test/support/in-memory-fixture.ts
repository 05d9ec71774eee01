import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ClientCapabilities, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../src/mcp/task-server.js";
import { TaskMetrics } from "../../src/metrics/task-metrics.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";

/** Every JSON-RPC message one client exchanged after initialization, in order. */
export interface Traffic {
  /** Server → client. */
  received: JSONRPCMessage[];
  /** Client → server. */
  sent: JSONRPCMessage[];
}

export interface FixtureOptions extends Partial<TaskServerOptions> {
  /** Runs on the app after the demo tools are registered and before it starts (extra tools, …). */
  setup?: (app: TaskServer) => void;
}

export interface Fixture {
  app: TaskServer;
  client: Client;
  connectClient(capabilities?: ClientCapabilities): Promise<Client>;
  /** The wire log of `client` (default: the fixture's first client). */
  traffic(client?: Client): Traffic;
  /** Resolves once the server has taken in the notifications `client` sent (in memory: after a short pause, the SDK's sends being chained promises). */
  heard(client?: Client): Promise<void>;
  close(): Promise<void>;
}

/** The demo server and a real SDK client joined by the SDK's in-memory transport. */
export async function inMemoryFixture(
  options: FixtureOptions = {},
  capabilities: ClientCapabilities = { elicitation: {}, sampling: {} },
): Promise<Fixture> {
  const { setup, ...serverOptions } = options;
  const app = registerDemoTools(
    createTaskServer({ name: "test", version: "0.0.0", store: memoryStore(), metrics: new TaskMetrics(), ...serverOptions }),
  );
  setup?.(app);
  await app.start();
  const clients: Client[] = [];
  const logs = new Map<Client, Traffic>();
  const connectClient = async (caps: ClientCapabilities = capabilities): Promise<Client> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await app.connect(serverSide);
    const client = new Client({ name: "test-client", version: "0.0.0" }, { capabilities: caps });
    await client.connect(clientSide);
    const log: Traffic = { received: [], sent: [] };
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message, sendOptions) => {
      log.sent.push(message);
      return send(message, sendOptions);
    };
    const onmessage = clientSide.onmessage;
    clientSide.onmessage = (message, extra) => {
      log.received.push(message);
      onmessage?.(message, extra);
    };
    logs.set(client, log);
    clients.push(client);
    return client;
  };
  const client = await connectClient();
  return {
    app,
    client,
    connectClient,
    traffic(c: Client = client): Traffic {
      const log = logs.get(c);
      if (!log) throw new Error("not a client of this fixture");
      return log;
    },
    heard: () => new Promise((resolve) => setTimeout(resolve, 20)),
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      await app.close();
    },
  };
}
