/**
 * `mcp-tasks serve --stdio` in a real process: the official SDK client over its
 * StdioClientTransport, and a raw pipe that checks every stdout line is a JSON-RPC message
 * ("In stdio mode nothing but protocol messages reaches stdout", docs/cli.md), and a line that is
 * no JSON-RPC message answered on stdout rather than dropped (stdio is a session of the 2025-11-25
 * era only: 2026-07-28 is served over HTTP).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, CliProcess, cliEnv, killAll, REPO_ROOT } from "../support/cli-process.js";
import { callTool, callToolAsTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { Recorder } from "../support/recorder.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";
const SERVE = ["serve", "--stdio", "--demo", "--store", "memory", "--log-level", "debug"];

let sdk: { client: Client; transport: StdioClientTransport } | undefined;
afterEach(async () => {
  if (sdk) {
    const pid = sdk.transport.pid;
    await sdk.client.close().catch(() => {});
    // The transport ends stdin, then escalates to SIGTERM/SIGKILL; make sure nothing outlives the test.
    if (pid !== null && isAlive(pid)) process.kill(pid, "SIGKILL");
    sdk = undefined;
  }
  await killAll();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function stringEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(cliEnv()).filter((e): e is [string, string] => e[1] !== undefined));
}

describe("stdio end to end", { timeout: 60_000 }, () => {
  it("runs tasks with the SDK client over StdioClientTransport; the transport never sees a non-protocol line", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, ...SERVE],
      cwd: REPO_ROOT,
      env: stringEnv(),
      stderr: "pipe",
    });
    const client = new Client({ name: "stdio-e2e", version: "0.0.0" }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    sdk = { client, transport };
    const stderrLines = new Recorder<string>();
    let stderrPartial = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderrPartial += chunk.toString("utf8");
      const lines = stderrPartial.split("\n");
      stderrPartial = lines.pop() ?? "";
      for (const line of lines) stderrLines.push(line);
    });
    // Protocol chains the transport's onerror here: a stdout line that is not JSON-RPC would land in it.
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    const statuses = new Recorder<{ taskId: string; status: string }>();
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => statuses.push(n.params));
    client.setRequestHandler(ElicitRequestSchema, async (request) => ({
      action: "accept",
      content: { answer: `re: ${request.params.message}` },
    }));
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content;
      const prompt = first && !Array.isArray(first) && first.type === "text" ? first.text : "?";
      return { role: "assistant", model: "echo-model", content: { type: "text", text: `model says: ${prompt}` } };
    });
    await client.connect(transport);

    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect((await callTool(client, "echo", { text: "plain" })).content).toEqual([{ type: "text", text: "plain" }]);

    // A task with progress after the CreateTaskResult (T-PROG-1) and status notifications (T-NOTE-1).
    const progress = new Recorder<Progress>();
    const created = await callToolAsTask(client, "sleep", { ms: 60, steps: 3 }, { ttl: 60_000 }, { onprogress: (p) => progress.push(p) });
    expect(created.task.status).toBe("working");
    const result = await taskResult(client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 60 ms" }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: created.task.taskId });
    await progress.waitFor((p) => p.progress === 3, "the last progress step");
    expect(progress.items.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    await statuses.waitFor((s) => s.taskId === created.task.taskId && s.status === "completed", "the completed status notification");
    expect((await getTask(client, created.task.taskId)).status).toBe("completed");

    // input_required over stdio: the elicitation rides the tasks/result exchange (T-INPUT).
    const ask = await callToolAsTask(client, "ask", { question: "colour?" });
    expect((await taskResult(client, ask.task.taskId)).content).toEqual([{ type: "text", text: "answer: re: colour?" }]);

    const sample = await callToolAsTask(client, "sample", { prompt: "hello" });
    expect((await taskResult(client, sample.task.taskId)).content).toEqual([{ type: "text", text: "model says: hello" }]);

    // A JSON-RPC error of the tool is replayed by tasks/result (T-RES-4).
    const thrown = await callToolAsTask(client, "throw", { code: -32042, message: "no luck" });
    await expectRpcError(taskResult(client, thrown.task.taskId), -32042, "no luck");

    expect(errors).toEqual([]);
    // Logs went to stderr, as JSON lines.
    const listening = await stderrLines.waitFor((l) => l.includes("serving MCP over stdio"), "the startup log line on stderr");
    expect(JSON.parse(listening)).toMatchObject({ msg: "serving MCP over stdio" });
  });

  it("writes nothing but newline-delimited JSON-RPC messages to stdout, and exits cleanly when stdin ends", async () => {
    const server = CliProcess.spawn(SERVE, { stdin: "pipe" });
    const responseTo = (id: number) =>
      server.stdoutLines.waitFor(
        (line) => {
          try {
            return (JSON.parse(line) as { id?: unknown }).id === id;
          } catch {
            return false;
          }
        },
        `the response to request ${id}`,
        20_000,
      );

    server.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-pipe", version: "0" } },
    });
    await responseTo(1);
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    server.send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 40, steps: 2 }, task: {}, _meta: { progressToken: "p-1" } },
    });
    const created = JSON.parse(await responseTo(2)) as { result: { task: { taskId: string } } };
    const taskId = created.result.task.taskId;
    server.send({ jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } });
    const result = JSON.parse(await responseTo(3)) as { result: { content: unknown } };
    expect(result.result.content).toEqual([{ type: "text", text: "slept 40 ms" }]);
    // An unknown method and a bad taskId: errors, still on the protocol channel.
    server.send({ jsonrpc: "2.0", id: 4, method: "tasks/frobnicate", params: {} });
    expect(JSON.parse(await responseTo(4))).toMatchObject({ error: { code: -32601 } });
    server.send({ jsonrpc: "2.0", id: 5, method: "tasks/get", params: { taskId: 42 } });
    expect(JSON.parse(await responseTo(5))).toMatchObject({ error: { code: -32602 } });

    server.child.stdin?.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });

    // Every byte on stdout belongs to a newline-terminated JSON-RPC 2.0 message.
    expect(server.stdout.endsWith("\n")).toBe(true);
    const lines = server.stdout.slice(0, -1).split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      expect(message["jsonrpc"]).toBe("2.0");
      expect("method" in message || "result" in message || "error" in message).toBe(true);
    }
    const progress = lines
      .map((l) => JSON.parse(l) as { method?: string; params?: Record<string, unknown> })
      .filter((m) => m.method === "notifications/progress");
    expect(progress.map((m) => [m.params?.["progressToken"], m.params?.["progress"]])).toEqual([
      ["p-1", 1],
      ["p-1", 2],
    ]);
    for (const m of progress) expect(m.params?.["_meta"]).toEqual({ [RELATED_TASK]: { taskId } });
    // Meanwhile the logs (debug level) all went to stderr.
    expect(server.stderr.items.length).toBeGreaterThan(0);
    expect(server.stderrText).toMatch(/task created/);
  });

  it("answers every line that is no JSON-RPC message (-32700 for text that is not JSON, -32600 for JSON that is no message, a batch, or a line over 4 MiB) and goes on serving", async () => {
    const server = CliProcess.spawn(SERVE, { stdin: "pipe" });
    const write = (text: string): void => void server.child.stdin?.write(text);
    const lines = (): Array<Record<string, unknown>> => server.stdoutLines.items.map((line) => JSON.parse(line) as Record<string, unknown>);
    const answered = (count: number) =>
      server.stdoutLines.waitFor(() => server.stdoutLines.items.length >= count, `${count} lines on stdout`, 20_000);

    server.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-pipe", version: "0" } },
    });
    await answered(1);
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    write('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":null}\n');
    write("not json at all\n\n");
    write('[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n');
    write('{"jsonrpc":"1.0","id":"four","method":"ping"}\n');
    // One message over the limit, sent in pieces: refused once, as a whole, then the next line is read.
    const huge = JSON.stringify({
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "x".repeat(5 * 1024 * 1024) } },
    });
    for (let at = 0; at < huge.length; at += 1024 * 1024) write(huge.slice(at, at + 1024 * 1024));
    write("\n");
    server.send({ jsonrpc: "2.0", id: 6, method: "ping" });
    await answered(7);

    const errors = lines().slice(1, 6);
    expect(errors).toEqual([
      { jsonrpc: "2.0", id: 2, error: { code: -32600, message: expect.stringMatching(/"params" must be an object/) } },
      { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the line is not valid JSON" } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/batches are not supported/) } },
      { jsonrpc: "2.0", id: "four", error: { code: -32600, message: expect.stringMatching(/"jsonrpc" must be "2.0"/) } },
      { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: message larger than 4194304 bytes" } },
    ]);
    expect(lines()[6]).toEqual({ jsonrpc: "2.0", id: 6, result: {} });
    server.child.stdin?.end();
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it("a client that closes the pipe while its task runs: the server drains, the task completes in the store, the process exits 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-stdio-gone-"));
    const file = join(dir, "tasks.db");
    try {
      const server = CliProcess.spawn(["serve", "--stdio", "--demo", "--store", `sqlite:${file}`], { stdin: "pipe" });
      const responseTo = (id: number) =>
        server.stdoutLines.waitFor((line) => (JSON.parse(line) as { id?: unknown }).id === id, `the response to request ${id}`, 20_000);
      server.send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "leaves", version: "0" } },
      });
      await responseTo(1);
      server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      // Progress keeps coming after the client has gone: each notification is a write to a closed pipe.
      server.send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 1_500, steps: 10 }, task: {}, _meta: { progressToken: "p" } },
      });
      const taskId = (JSON.parse(await responseTo(2)) as { result: { task: { taskId: string } } }).result.task.taskId;
      server.child.stdout?.destroy();
      server.child.stdin?.end();
      expect(await server.exited).toEqual({ code: 0, signal: null });
      const db = new Database(file, { readonly: true });
      try {
        expect(db.prepare("SELECT status FROM tasks WHERE id = ?").get(taskId)).toEqual({ status: "completed" });
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
