import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory-store.js";

export interface Fixture {
  app: TaskServer;
  client: Client;
  connectClient(capabilities?: ClientCapabilities): Promise<Client>;
  close(): Promise<void>;
}

/** The demo server and a real SDK client joined by the SDK's in-memory transport. */
export async function inMemoryFixture(
  options: Partial<TaskServerOptions> = {},
  capabilities: ClientCapabilities = { elicitation: {}, sampling: {} },
): Promise<Fixture> {
  const app = registerDemoTools(createTaskServer({ name: "test", version: "0.0.0", store: memoryStore(), ...options }));
  await app.start();
  const clients: Client[] = [];
  const connectClient = async (caps: ClientCapabilities = capabilities): Promise<Client> => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await app.connect(serverSide);
    const client = new Client({ name: "test-client", version: "0.0.0" }, { capabilities: caps });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };
  const client = await connectClient();
  return {
    app,
    client,
    connectClient,
    async close() {
      for (const c of clients) await c.close().catch(() => {});
      await app.close();
    },
  };
}
