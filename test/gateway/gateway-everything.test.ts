/**
 * `mcp-tasks gateway` in front of the real `@modelcontextprotocol/server-everything` over stdio,
 * driven over HTTP by the official SDK client: its tools become task-capable tools (T-TOOL), a
 * call as a task runs in the gateway (T-NEW, T-RES), and the upstream's progress, elicitation and
 * sampling reach the requestor as the task's own (T-INPUT).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { killAll } from "../support/cli-process.js";
import { getTask, taskResult, callToolAsTask, cancelTask } from "../support/conformance.js";
import { closeClients, EVERYTHING, eventually, nodeCommand, startGateway } from "./gateway-fixture.js";

afterEach(async () => {
  await closeClients();
  await killAll();
});

const everything = (): Promise<Awaited<ReturnType<typeof startGateway>>> =>
  startGateway(["--store", "memory", "--upstream-stdio", nodeCommand(EVERYTHING, "stdio")]);

// Each test starts real processes (gateway, upstream), seconds each on a shared machine.
describe("gateway in front of server-everything (stdio)", { timeout: 90_000 }, () => {
  it("lists the upstream's tools with their schemas as they are and execution.taskSupport optional", async () => {
    const gateway = await everything();
    const { client } = await gateway.connect();
    const { tools } = await client.listTools();
    const long = tools.find((t) => t.name === "trigger-long-running-operation");
    expect(long?.execution?.taskSupport).toBe("optional");
    expect(long?.annotations?.readOnlyHint).toBe(true);
    expect(Object.keys(long?.inputSchema.properties ?? {}).sort()).toEqual(["duration", "steps"]);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "trigger-elicitation-request", "trigger-sampling-request"]));
  });

  it("answers a plain call with the upstream's result", async () => {
    const gateway = await everything();
    const { client } = await gateway.connect();
    const result = await client.callTool({ name: "echo", arguments: { message: "hello" } });
    expect(result.content).toEqual([{ type: "text", text: "Echo: hello" }]);
  });

  it("runs a call as a task: the upstream's progress becomes the task's, tasks/result is the upstream's result", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    const created = await http.client.request(
      {
        method: "tools/call",
        params: { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 }, task: {}, _meta: { progressToken: "p-1" } },
      },
      CreateTaskResultSchema,
    );
    const result = await taskResult(http.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 1 seconds, Steps: 3." }]);
    const progress = http.messagesOf("notifications/progress").map((m) => m.message.params);
    // The last step's progress races the result, after which a task sends none: 1 and 2 always come.
    expect(progress.slice(0, 2)).toEqual([1, 2].map((n) => expect.objectContaining({ progressToken: "p-1", progress: n, total: 3 })));
    expect((await getTask(http.client, created.task.taskId)).status).toBe("completed");
  });

  it("puts the upstream's elicitation to the requestor as the task's question (input_required)", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    const asked: unknown[] = [];
    http.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Ada Lovelace" } };
    });
    const created = await callToolAsTask(http.client, "trigger-elicitation-request", {});
    const result = await taskResult(http.client, created.task.taskId);
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(result.content)).toContain("- Name: Ada Lovelace");
  });

  it("puts the upstream's sampling request to the requestor and returns the upstream's use of the answer", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    http.client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      model: "test-model",
      content: { type: "text", text: "sampled reply" },
    }));
    const created = await callToolAsTask(http.client, "trigger-sampling-request", { prompt: "hi", maxTokens: 20 });
    const result = await taskResult(http.client, created.task.taskId);
    expect(JSON.stringify(result.content)).toContain("sampled reply");
  });

  it("cancels a running task and keeps serving the upstream", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    const created = await callToolAsTask(http.client, "trigger-long-running-operation", { duration: 30, steps: 30 });
    await eventually("the task to run", async () =>
      (await getTask(http.client, created.task.taskId)).status === "working" ? true : undefined,
    );
    await cancelTask(http.client, created.task.taskId);
    expect((await getTask(http.client, created.task.taskId)).status).toBe("cancelled");
    const echo = await http.client.request(
      { method: "tools/call", params: { name: "echo", arguments: { message: "still here" } } },
      CallToolResultSchema,
    );
    expect(echo.content).toEqual([{ type: "text", text: "Echo: still here" }]);
  });

  it("fails the running task with a clear message when the upstream is killed (-9), and serves the next call after restarting it", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    const created = await callToolAsTask(http.client, "trigger-long-running-operation", { duration: 30, steps: 30 });
    await eventually("the task to run", async () =>
      (await getTask(http.client, created.task.taskId)).status === "working" ? true : undefined,
    );
    const [pid] = gateway.upstreamPids();
    expect(pid).toBeDefined();
    process.kill(pid as number, "SIGKILL");
    const failed = await eventually("the task to fail", async () => {
      const task = await getTask(http.client, created.task.taskId);
      return task.status === "failed" ? task : undefined;
    });
    expect(failed.statusMessage).toMatch(/upstream server .* closed the connection during tools\/call trigger-long-running-operation/);
    const echo = await eventually("a call after the restart", () =>
      http.client.request({ method: "tools/call", params: { name: "echo", arguments: { message: "again" } } }, CallToolResultSchema),
    );
    expect(echo.content).toEqual([{ type: "text", text: "Echo: again" }]);
    expect(gateway.upstreamPids()).not.toContain(pid);
  });

  it("passes the upstream's resource templates and reads through", async () => {
    const gateway = await everything();
    const { client } = await gateway.connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    const text = resourceTemplates.find((t) => t.name === "Dynamic Text Resource");
    expect(text?.uriTemplate).toMatch(/\{resourceId\}$/);
    const uri = (text?.uriTemplate ?? "").replace("{resourceId}", "7");
    const read = await client.readResource({ uri });
    expect(read.contents).toEqual([
      expect.objectContaining({ uri, mimeType: "text/plain", text: expect.stringMatching(/^Resource 7: This is a plaintext resource/) }),
    ]);
  });

  it("passes the upstream's prompts through: listed with their arguments, rendered by the upstream", async () => {
    const gateway = await everything();
    const { client } = await gateway.connect();
    const { prompts } = await client.listPrompts();
    const args = prompts.find((p) => p.name === "args-prompt");
    // As the upstream itself lists them, asked directly.
    const direct = new Client({ name: "direct", version: "0" });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" }));
    const upstreamArgs = (await direct.listPrompts()).prompts.find((p) => p.name === "args-prompt")?.arguments;
    await direct.close();
    expect(upstreamArgs?.[0]).toEqual({ name: "city", description: "Name of the city", required: true });
    expect(args?.arguments).toEqual(upstreamArgs);
    const rendered = await client.getPrompt({ name: "args-prompt", arguments: { city: "Paris" } });
    expect(rendered.messages).toEqual([{ role: "user", content: { type: "text", text: "What's weather in Paris?" } }]);
  });

  it("forwards a resource subscription upstream and relays its notifications/resources/updated", async () => {
    const gateway = await everything();
    const http = await gateway.connect();
    const { resources } = await http.client.listResources();
    const uri = resources[0]?.uri;
    expect(uri).toBeDefined();
    await http.client.subscribeResource({ uri: uri as string });
    // server-everything sends updates of subscribed resources every 5 s once this is toggled on.
    await http.client.callTool({ name: "toggle-subscriber-updates", arguments: {} });
    const updated = await http.received.waitFor(
      (r) => r.message.method === "notifications/resources/updated",
      "an updated notification",
      30_000,
    );
    expect(updated.message.params).toEqual(expect.objectContaining({ uri }));
  });

  it("logs an upstream log message it cannot relay with the upstream's level beside its own (one `level` key per JSON line)", async () => {
    // server-everything logs at start-up, when no call is in flight to relay it to.
    const gateway = await everything();
    const line = await eventually(
      "the gateway to log an upstream log message",
      async () => gateway.cli.stderr.items.find((l) => l["msg"] === "upstream log message (no single call to relay it to)"),
      30_000,
    );
    expect(line["level"]).toBe(20); // pino's debug, not the upstream's level
    expect(typeof line["upstreamLevel"]).toBe("string");
    expect(line["raw"].match(/"level":/g)).toHaveLength(1);
  });
});
