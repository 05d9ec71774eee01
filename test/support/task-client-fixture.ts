import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { TaskClient, type TaskClientOptions } from "../../src/client/task-client.js";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";

/** Every message one requestor exchanged, in order (client's view). */
export interface WireLog {
  sent: JSONRPCMessage[];
  received: JSONRPCMessage[];
}

/** Records what goes through a client transport without changing it. */
export function tapTransport(transport: Transport): WireLog {
  const log: WireLog = { sent: [], received: [] };
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    log.sent.push(message);
    return send(message, options);
  };
  const start = transport.start.bind(transport);
  transport.start = async () => {
    // The SDK installs onmessage in connect(), before start(): wrap it then.
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
      log.received.push(message);
      onmessage?.(message, extra);
    };
    return start();
  };
  return log;
}

export interface TaskClientFixture {
  app: TaskServer;
  client: Client;
  tasks: TaskClient;
  wire: WireLog;
  /** Another requestor on the same server (a restarted process, a second session). */
  connectAnother(options?: TaskClientOptions): Promise<{ client: Client; tasks: TaskClient; wire: WireLog }>;
  close(): Promise<void>;
}

/** Our demo server and a TaskClient on a real SDK Client, over the SDK's in-memory transport. */
export async function taskClientFixture(
  clientOptions: TaskClientOptions = {},
  serverOptions: Partial<TaskServerOptions> & { setup?: (app: TaskServer) => void } = {},
): Promise<TaskClientFixture> {
  const { setup, ...rest } = serverOptions;
  const app = registerDemoTools(createTaskServer({ name: "test", version: "0.0.0", store: memoryStore(), pollIntervalMs: 50, ...rest }));
  setup?.(app);
  await app.start();
  const opened: { client: Client; tasks: TaskClient }[] = [];
  const connect = async (options: TaskClientOptions) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await app.connect(serverSide);
    const client = new Client({ name: "requestor", version: "0.0.0" });
    const tasks = new TaskClient(client, options);
    const wire = tapTransport(clientSide);
    await client.connect(clientSide);
    opened.push({ client, tasks });
    return { client, tasks, wire };
  };
  const first = await connect(clientOptions);
  return {
    app,
    ...first,
    connectAnother: (options = {}) => connect(options),
    async close() {
      for (const { client, tasks } of opened) {
        await tasks.close().catch(() => {});
        await client.close().catch(() => {});
      }
      await app.close();
    },
  };
}
