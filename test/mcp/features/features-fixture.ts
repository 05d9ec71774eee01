/**
 * A task server with resources, a template and prompts, and real SDK clients on it: over the
 * SDK's in-memory transport, or over real Streamable HTTP (serveHttp, local sessions).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach } from "vitest";
import { z } from "zod";
import { serveHttp, type HttpHandle } from "../../../src/http/http-server.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../../src/mcp/task-server.js";
import { memoryStore } from "../../../src/store/memory/memory-store.js";
import { connectHttpClient } from "../../support/http-fixture.js";

export type Via = "in-memory" | "http";
export const VIAS: readonly Via[] = ["in-memory", "http"];

export interface FeaturesFixture {
  app: TaskServer;
  /** A new SDK client, initialized. */
  connect(): Promise<Client>;
  /** The URL of the HTTP endpoint (http only). */
  url: string | undefined;
}

/** The features every test starts with (a `setup` adds or replaces). */
export function registerSampleFeatures(app: TaskServer): TaskServer {
  app.tool("echo", { description: "Echoes.", input: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  app.resource(
    { uri: "memo://readme", name: "readme", title: "Read me", description: "A text.", mimeType: "text/plain", size: 5 },
    () => "hello",
  );
  app.resource({ uri: "memo://logo", name: "logo", mimeType: "image/png" }, () => ({ blob: new Uint8Array([137, 80, 78, 71]) }));
  app.resourceTemplate(
    {
      uriTemplate: "users://{id}/profile",
      name: "profile",
      description: "A user's profile.",
      mimeType: "application/json",
      list: () => [{ uri: "users://ada/profile", name: "Ada's profile" }],
      complete: { id: (value) => ["ada", "alan", "grace"].filter((id) => id.startsWith(value)) },
    },
    (_uri, { id }) => JSON.stringify({ id }),
  );
  app.prompt(
    "greeting",
    {
      description: "Greets someone.",
      arguments: z.object({ name: z.string().describe("Who to greet"), mood: z.string().optional() }),
      complete: {
        name: (value, ctx) => ["Ada", "Alan", `Mood-${ctx.arguments["mood"] ?? "none"}`].filter((name) => name.startsWith(value)),
      },
    },
    ({ name, mood }) => ({
      description: "A greeting",
      messages: [{ role: "user", content: { type: "text", text: `Hello ${name}${mood ? ` (${mood})` : ""}` } }],
    }),
  );
  return app;
}

/** Starts fixtures for one test file and closes each after its test. */
export function useFeatures(
  via: Via,
): (options?: { setup?: (app: TaskServer) => void; server?: Partial<TaskServerOptions> }) => Promise<FeaturesFixture> {
  let closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    const closing = closers.reverse();
    closers = [];
    for (const close of closing) await close().catch(() => {});
  });
  return async (options = {}) => {
    const app = createTaskServer({ name: "features-test", version: "0.0.0", store: memoryStore(), ...options.server });
    (options.setup ?? registerSampleFeatures)(app);
    await app.start();
    closers.push(() => app.close());
    let http: HttpHandle | undefined;
    if (via === "http") {
      http = await serveHttp(app, { port: 0, host: "127.0.0.1" });
      closers.push(() => (http as HttpHandle).close());
    }
    const connect = async (): Promise<Client> => {
      if (http) {
        const connection = await connectHttpClient(http.url);
        closers.push(() => connection.close());
        return connection.client;
      }
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await app.connect(serverSide);
      const client = new Client({ name: "features-client", version: "0.0.0" });
      await client.connect(clientSide);
      closers.push(() => client.close());
      return client;
    };
    return { app, connect, url: http?.url };
  };
}

/** A client's notifications, in arrival order. */
export interface Heard {
  readonly all: Array<{ method: string; params: Record<string, unknown> | undefined }>;
  /** The next notification (of any method) not yet taken, once it arrives. */
  next(): Promise<{ method: string; params: Record<string, unknown> | undefined }>;
}

/** Records every notification `client` receives (the SDK client has no handler of its own for these). */
export function listen(client: Client): Heard {
  const all: Heard["all"] = [];
  const waiting: Array<(item: Heard["all"][number]) => void> = [];
  let taken = 0;
  client.fallbackNotificationHandler = async ({ method, params }) => {
    const item = { method, params: params as Record<string, unknown> | undefined };
    all.push(item);
    waiting.shift()?.(item);
  };
  return {
    all,
    next: () => {
      const index = taken++;
      const ready = all[index];
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}
