/**
 * `mcp-tasks call` and `mcp-tasks tasks list|get|result|cancel` as scripts run them: real
 * processes (no terminal) against our server over real HTTP, over stdio, and against a server
 * built on the SDK's own experimental tasks (which binds tasks to the MCP session).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, killAll, runCli } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { startRecordingProxy } from "../support/recording-proxy.js";
import { startSdkTaskServer, type SdkTaskServer } from "../support/sdk-task-server.js";
import { TASK_ID_PATTERN } from "../support/task-id-pattern.js";

let state: string;
let ours: HttpServerFixture;
beforeEach(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-state-"));
  ours = await startHttpServer({ app: { pollIntervalMs: 50 } });
});
afterEach(async () => {
  await killAll();
  await ours.close();
  rmSync(state, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { env: { MCP_TASKS_STATE_DIR: state }, timeoutMs: 30_000 });
const json = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) ?? "null") as Record<string, unknown>;

describe("mcp-tasks call", { timeout: 60_000 }, () => {
  it("exit 0: runs a tool as a task and prints its result", async () => {
    const run = await cli(["call", ours.url.href, "sleep", '{"ms":100}', "--task"]);
    expect(run.stdout).toBe("slept 100 ms\n");
    expect(run.code).toBe(0);
  });

  it("--json: the outcome as one JSON object with the task id", async () => {
    const run = await cli(["call", ours.url.href, "sleep", '{"ms":10}', "--task", "--ttl", "60000", "--json"]);
    expect(json(run.stdout)).toMatchObject({
      taskId: expect.any(String),
      status: "completed",
      result: { content: [{ type: "text", text: "slept 10 ms" }] },
    });
    expect(run.code).toBe(0);
  });

  it("exit 1: a tool task that fails with isError (T-LIFE-4), and one that ends in a JSON-RPC error (T-RES-4, code kept)", async () => {
    const failed = await cli(["call", ours.url.href, "fail", '{"message":"disk full"}', "--task", "--json"]);
    expect(json(failed.stdout)).toMatchObject({ status: "failed", result: { isError: true } });
    expect(failed.code).toBe(1);
    const thrown = await cli(["call", ours.url.href, "throw", '{"code":-32042,"message":"quota"}', "--task", "--json"]);
    expect(json(thrown.stdout)).toMatchObject({ status: "failed", error: { code: -32042, message: "quota" } });
    expect(thrown.code).toBe(1);
  });

  it("exit 2: usage errors (bad JSON arguments, a task wish for a forbidden tool, T-TOOL-2) — nothing sent", async () => {
    const badJson = await cli(["call", ours.url.href, "echo", "{nope"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("not valid JSON");
    const forbidden = await cli(["call", ours.url.href, "echo", '{"text":"x"}', "--task"]);
    expect(forbidden.code).toBe(2);
    expect(forbidden.stderr).toContain('execution.taskSupport is "forbidden"');
    const noTool = await cli(["call", ours.url.href]);
    expect(noTool.code).toBe(2);
  });

  it("exit 4: the target cannot be reached", async () => {
    const run = await cli(["call", "http://127.0.0.1:9/mcp", "echo", '{"text":"x"}']);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain("Cannot connect");
  });

  it('without a terminal, an elicitation is answered "cancel" with a note (nobody can answer it)', async () => {
    const run = await cli(["call", ours.url.href, "ask", '{"question":"Colour?"}', "--task"]);
    expect(run.stdout).toBe("cancelled\n");
    expect(run.stderr).toContain("no terminal to answer");
    expect(run.code).toBe(0);
  });

  it("--stdio: spawns the server command and talks to it over stdio", async () => {
    const server = `"${process.execPath}" "${BIN}" serve --stdio --demo --store memory --log-level warn`;
    const run = await cli(["call", "--stdio", server, "sleep", '{"ms":20}', "--task"]);
    expect(run.stdout).toBe("slept 20 ms\n");
    expect(run.code).toBe(0);
  });
});

describe("mcp-tasks call --detach, then mcp-tasks tasks … in later processes", { timeout: 60_000 }, () => {
  it("--detach prints the task id alone on a line; tasks get / result / list find it (T-GET-1, T-RES, T-LIST)", async () => {
    const detached = await cli(["call", ours.url.href, "sleep", '{"ms":300}', "--detach"]);
    expect(detached.code).toBe(0);
    expect(detached.stdout).toMatch(new RegExp(`^${TASK_ID_PATTERN}\n$`));
    const id = detached.stdout.trim();
    const got = await cli(["tasks", "get", ours.url.href, id, "--json"]);
    expect(json(got.stdout)).toMatchObject({ taskId: id, status: expect.stringMatching(/working|completed/) });
    const result = await cli(["tasks", "result", ours.url.href, id]);
    expect(result.stdout).toBe("slept 300 ms\n");
    expect(result.code).toBe(0);
    const listed = await cli(["tasks", "list", ours.url.href, "--json"]);
    expect((json(listed.stdout)["tasks"] as { taskId: string }[]).map((t) => t.taskId)).toContain(id);
  });

  it("tasks cancel, then tasks result exits 3 (cancelled); cancelling again exits 1 with the server's -32602 (T-CANCEL-2)", async () => {
    const id = (await cli(["call", ours.url.href, "sleep", '{"ms":60000}', "--detach"])).stdout.trim();
    const cancel = await cli(["tasks", "cancel", ours.url.href, id, "--json"]);
    expect(json(cancel.stdout)).toMatchObject({ taskId: id, status: "cancelled" });
    expect(cancel.code).toBe(0);
    const result = await cli(["tasks", "result", ours.url.href, id]);
    expect(result.code).toBe(3);
    const again = await cli(["tasks", "cancel", ours.url.href, id, "--json"]);
    expect(json(again.stdout)).toMatchObject({ error: { code: -32602 } });
    expect(again.code).toBe(1);
  });

  it("tasks get of an unknown id exits 1 with the server's -32602 (T-ERR-1)", async () => {
    const run = await cli(["tasks", "get", ours.url.href, "no-such-task"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("-32602");
  });

  it("T-SEC-5 (requestor): the journal in the state dir records the tasks created and what was done with them", async () => {
    const id = (await cli(["call", ours.url.href, "sleep", '{"ms":10}', "--detach"])).stdout.trim();
    await cli(["tasks", "result", ours.url.href, id]);
    const entries = readFileSync(join(state, "journal.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { op: string; taskId: string; target: string });
    expect(entries.filter((e) => e.taskId === id).map((e) => e.op)).toEqual(expect.arrayContaining(["created", "resumed", "result"]));
    expect(entries.every((e) => e.target === ours.url.href)).toBe(true);
  });

  it("a task whose creating session the restarted server no longer knows is reached from a new session; the dead session is forgotten", async () => {
    // One store outliving the first server, as a database outlives a restart; its MCP sessions do not.
    const store = { ...memoryStore(), close: async () => {} };
    const first = await startHttpServer({ app: { pollIntervalMs: 50, store } });
    const id = (await cli(["call", first.url.href, "sleep", '{"ms":10}', "--detach"])).stdout.trim();
    expect(readdirSync(join(state, "sessions"))).toHaveLength(1);
    expect(json((await cli(["tasks", "get", first.url.href, id, "--json"])).stdout)).toMatchObject({ status: "completed" });
    await first.close();
    const again = await startHttpServer({ app: { pollIntervalMs: 50, store }, http: { port: Number(first.url.port) } });
    try {
      const result = await cli(["tasks", "result", again.url.href, id]);
      expect(result.stdout).toBe("slept 10 ms\n");
      expect(result.code).toBe(0);
      expect(readdirSync(join(state, "sessions"))).toHaveLength(0);
    } finally {
      await again.close();
    }
  });
});

describe("a resumed session", { timeout: 60_000 }, () => {
  it("tasks result, in the session that created the task, reopens that session's GET stream (the SDK transport opens it only after an initialize)", async () => {
    const bound = await startHttpServer({ app: { pollIntervalMs: 50, bind: "session" } });
    const proxy = await startRecordingProxy(bound.url);
    try {
      const id = (await cli(["call", proxy.url.href, "sleep", '{"ms":3000}', "--detach"])).stdout.trim();
      const created = proxy.passed.items.find((p) => p.method === "POST" && p.sessionId !== undefined)?.sessionId;
      expect(created).toBeDefined();
      const before = proxy.passed.items.length;
      const result = await cli(["tasks", "result", proxy.url.href, id]);
      expect(result.stdout).toBe("slept 3000 ms\n");
      const streams = proxy.passed.items.slice(before).filter((p) => p.method === "GET");
      expect(streams).toEqual([{ method: "GET", sessionId: created }]);
    } finally {
      await proxy.close();
      await bound.close();
    }
  });
});

describe("against a server that binds tasks to the MCP session (the SDK's own)", { timeout: 60_000 }, () => {
  let sdk: SdkTaskServer;
  beforeEach(async () => {
    sdk = await startSdkTaskServer({ pollIntervalMs: 50 });
  });
  afterEach(async () => {
    await sdk.close();
  });

  it("call --detach, then tasks get / list / result in later processes reach the task: the CLI resumes the session that created the task", async () => {
    const id = (await cli(["call", sdk.url, "sleep", '{"ms":200}', "--detach"])).stdout.trim();
    expect(id).not.toBe("");
    expect(sdk.sessions.size).toBe(1);
    const got = await cli(["tasks", "get", sdk.url, id, "--json"]);
    expect(json(got.stdout)).toMatchObject({ taskId: id });
    const listed = await cli(["tasks", "list", sdk.url, "--json"]);
    expect((json(listed.stdout)["tasks"] as { taskId: string }[]).map((t) => t.taskId)).toContain(id);
    const result = await cli(["tasks", "result", sdk.url, id]);
    expect(result.stdout).toBe("slept 200 ms\n");
    expect(result.code).toBe(0);
    expect(sdk.sessions.size).toBe(1);
  });

  it("tasks cancel in a later process cancels the SDK server's task", async () => {
    const id = (await cli(["call", sdk.url, "sleep", '{"ms":60000}', "--detach"])).stdout.trim();
    const cancel = await cli(["tasks", "cancel", sdk.url, id, "--json"]);
    expect(json(cancel.stdout)).toMatchObject({ taskId: id, status: "cancelled" });
  });
});
