/**
 * The reverse direction end to end: a server tool asks with `{ asTask: true }`, the client (a
 * TaskClient hosting tasks) runs the elicitation/sampling as a client-side task, and the server
 * polls it to its end — over real stdio (a spawned `mcp-tasks serve --stdio`) and real HTTP.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { TaskClient, type TaskClientOptions } from "../../src/client/task-client.js";
import registerAsTaskTools from "../support/as-task-tools.js";
import { BIN, cliEnv, REPO_ROOT } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { ANONYMOUS_CALLER } from "../../src/core/caller.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const answers = (log: { elicited: (string | null)[] }): TaskClientOptions => ({
  hostTasks: true,
  elicit: async (_params, info) => {
    log.elicited.push(info.taskId);
    return { action: "accept", content: { answer: "from the client's task" } };
  },
  sample: async () => ({ role: "assistant", content: { type: "text", text: "sampled in a client task" }, model: "test" }),
});

async function stdioTaskClient(options: TaskClientOptions): Promise<TaskClient> {
  const env = Object.fromEntries(Object.entries(cliEnv()).filter((e): e is [string, string] => e[1] !== undefined));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "serve", "--stdio", "--demo", "--tools", "test/support/as-task-tools.ts", "--store", "memory", "--poll-interval", "50"],
    cwd: REPO_ROOT,
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "reverse-stdio", version: "0.0.0" });
  const tasks = new TaskClient(client, options);
  await client.connect(transport);
  cleanups.push(async () => {
    await tasks.close();
    const pid = transport.pid;
    await client.close();
    if (pid !== null) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
  return tasks;
}

async function httpTaskClient(options: TaskClientOptions): Promise<TaskClient> {
  const server: HttpServerFixture = await startHttpServer({ app: { pollIntervalMs: 50 } });
  registerAsTaskTools(server.app);
  const client = new Client({ name: "reverse-http", version: "0.0.0" });
  const tasks = new TaskClient(client, options);
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  cleanups.push(async () => {
    await tasks.close();
    await client.close();
    await server.close();
  });
  return tasks;
}

for (const [name, connect] of [
  ["stdio", stdioTaskClient],
  ["Streamable HTTP", httpTaskClient],
] as const) {
  describe(`client-hosted tasks over ${name}`, { timeout: 60_000 }, () => {
    it("T-CAP-3: a tool task's elicitation runs as a client-hosted task and the tool gets its answer", async () => {
      const log = { elicited: [] as (string | null)[] };
      const tasks = await connect(answers(log));
      const call = await tasks.callTool("ask_as_task", { question: "?" }, { task: true });
      if (call.kind !== "task") throw new Error("expected a task");
      expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: from the client's task" }] });
      expect(log.elicited).toHaveLength(1);
      // The client's task is in its own engine, completed.
      const hosted = await tasks.receiver.engine!.get(log.elicited[0], ANONYMOUS_CALLER);
      expect(hosted.status).toBe("completed");
    });

    it("a plain tool call's sampling runs as a client-hosted task", async () => {
      const tasks = await connect(answers({ elicited: [] }));
      const call = await tasks.callTool("sample_as_task", { prompt: "hello" });
      expect(call).toMatchObject({ kind: "result", result: { content: [{ type: "text", text: "model: sampled in a client task" }] } });
    });
  });
}
