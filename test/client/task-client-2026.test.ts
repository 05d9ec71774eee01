/**
 * TaskClient as a 2026-07-28 requestor: against our own server (serveHttp, both eras
 * on one endpoint, a real SQLite file) it discovers the era and speaks the tasks extension —
 * stateless requests, tasks/get polling, inputRequests answered through tasks/update, MRTR rounds,
 * cancel, resume by id; against a 2025-11-25-only server (the SDK's own McpServer over
 * StreamableHTTPServerTransport) it falls back to initialize, once per target thanks to the cache.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { memoryEraCache } from "../../src/client/era-choice.js";
import { TaskClient, type ConnectOptions } from "../../src/client/task-client.js";
import { memoryJournal } from "../../src/client/task-journal.js";
import { StatelessConnection } from "../../src/mcp/requestor/rev2026-07-28/stateless-connection.js";
import { RemoteError } from "../../src/mcp/requestor/requestor-errors.js";
import { CliProcess } from "../support/cli-process.js";
import { startSdkTaskServer, type SdkTaskServer } from "../support/sdk-task-server.js";
import { startTasksExtServer, type TasksExtServer } from "../support/tasks-ext-server.js";

let server: TasksExtServer;
const clients: TaskClient[] = [];
const dirs: string[] = [];
const processes: CliProcess[] = [];

beforeAll(async () => {
  server = await startTasksExtServer({ app: { pollIntervalMs: 100 } });
}, 30_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(processes.splice(0).map((p) => p.kill("SIGKILL")));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await server?.close();
});

/** The methods of every request sent through this fetch, in order (the body's `method`). */
function countingFetch(): { fetch: typeof fetch; methods: string[] } {
  const methods: string[] = [];
  return {
    methods,
    fetch: (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      if (typeof init?.body === "string") {
        const body = JSON.parse(init.body) as { method?: string };
        if (body.method) methods.push(body.method);
      }
      return fetch(input, init);
    }) as typeof fetch,
  };
}

async function connect(url: URL | string = server.url, options: ConnectOptions = {}): Promise<TaskClient> {
  const tasks = await TaskClient.connect(url, options);
  clients.push(tasks);
  return tasks;
}

function stateless(options: ConstructorParameters<typeof TaskClient>[1] = {}, url: URL | string = server.url): TaskClient {
  const tasks = new TaskClient(new StatelessConnection(url), options);
  clients.push(tasks);
  return tasks;
}

const textOf = (result: { content: Array<{ type: string; text?: string }> }): string => String(result.content[0]?.text);

describe("TaskClient — which era (server/discover first, X-CAP-3)", () => {
  it("speaks 2026-07-28 to a server whose server/discover lists it", async () => {
    const tasks = await connect();
    expect(tasks.protocol).toBe("2026-07-28");
  });

  it("falls back to a 2025-11-25 session with a server that refuses server/discover (the SDK's McpServer)", async () => {
    const sdk: SdkTaskServer = await startSdkTaskServer();
    try {
      const tasks = await connect(sdk.url);
      expect(tasks.protocol).toBe("2025-11-25");
      const call = await tasks.callTool("sleep", { ms: 10 }, { task: true });
      expect(call.kind).toBe("task");
      if (call.kind === "task") expect(textOf(await call.task.result())).toBe("slept 10 ms");
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await sdk.close();
    }
  });

  it("asks server/discover once per target when the era is cached: a 2025-only server gets no second refused discover", async () => {
    const sdk = await startSdkTaskServer();
    try {
      const cache = memoryEraCache();
      const first = countingFetch();
      await connect(sdk.url, { eraCache: cache, fetch: first.fetch });
      expect(first.methods.slice(0, 2)).toEqual(["server/discover", "initialize"]);
      const second = countingFetch();
      const again = await connect(sdk.url, { eraCache: cache, fetch: second.fetch });
      expect(again.protocol).toBe("2025-11-25");
      expect(second.methods).not.toContain("server/discover");
    } finally {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await sdk.close();
    }
  });

  it("speaks the forced revision without asking: protocol 2025-11-25 initializes a session on our server", async () => {
    const counted = countingFetch();
    const tasks = await connect(server.url, { protocol: "2025-11-25", fetch: counted.fetch });
    expect(tasks.protocol).toBe("2025-11-25");
    expect(counted.methods[0]).toBe("initialize");
  });
});

describe("TaskClient under 2026-07-28 — lifecycle (X-NEW-1, X-GET)", () => {
  it("gets a task for a long optional call, follows it with tasks/get and reads the result inline", async () => {
    const journal = memoryJournal();
    const tasks = stateless({ journal, target: "ours" });
    const call = await tasks.callTool("slow_compute", { seconds: 1, label: "life" });
    expect(call.kind).toBe("task");
    if (call.kind !== "task") return;
    const seen: string[] = [];
    for await (const t of call.task.updates()) seen.push(t.status);
    expect(seen[0]).toBe("working");
    expect(seen.at(-1)).toBe("completed");
    expect(textOf(await call.task.result())).toBe("Computed life in 1 s");
    const created = (await journal.entries()).find((e) => e.op === "created");
    expect(created).toMatchObject({ taskId: call.task.id, name: "slow_compute", protocol: "2026-07-28", target: "ours" });
  });

  it("maps ttlMs and pollIntervalMs to the Task callers read (ttl, pollInterval)", async () => {
    const tasks = stateless();
    const call = await tasks.callTool("count_required", {});
    if (call.kind !== "task") throw new Error("expected a task");
    const task = await tasks.get(call.task.id);
    expect(task).toMatchObject({ taskId: call.task.id, pollInterval: 100 });
    expect(task.ttl === null || typeof task.ttl === "number").toBe(true);
  });

  it("answers a short optional call inline, with no task (resultType complete)", async () => {
    const call = await stateless().callTool("wait_ms", { ms: 1 });
    expect(call).toEqual({ kind: "result", result: { content: [{ type: "text", text: "waited 1 ms" }] } });
  });

  it("reads a JSON-RPC error of a task as a failed outcome carrying it (X-GET-7)", async () => {
    const call = await stateless().callTool("protocol_error_job", {});
    if (call.kind !== "task") throw new Error("expected a task");
    const outcome = await call.task.outcome();
    expect(outcome.status).toBe("failed");
    expect("error" in outcome && outcome.error).toMatchObject({ code: -32603, message: "API rate limit exceeded" });
  });

  it("with task: false does not declare the extension: an optional tool runs plainly (X-CAP-10); a required one, as our server lists it, is refused before sending, as under 2025-11-25 (T-TOOL-4)", async () => {
    const tasks = stateless();
    expect(await tasks.callTool("wait_ms", { ms: 400 }, { task: false })).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "waited 400 ms" }] },
    });
    await expect(tasks.callTool("count_required", {}, { task: false })).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("must be called as a task"),
    });
  });

  it("reads each tool's task support from our server's tools/list (the extension lists none, X-LEG-6)", async () => {
    const tasks = stateless();
    expect(await tasks.taskSupportOf("count_required")).toBe("required");
    expect(await tasks.taskSupportOf("wait_ms")).toBe("optional");
  });

  it("refuses tasks.list() under 2026-07-28 (no tasks/list, X-LEG-1)", async () => {
    const list = stateless().list();
    await expect(list.next()).rejects.toMatchObject({ code: -32601 });
  });
});

describe("TaskClient under 2026-07-28 — input", () => {
  it("answers a task's inputRequests with the elicit handler, through tasks/update (X-GET-3, X-UPD-1)", async () => {
    const asked: string[] = [];
    const tasks = stateless({
      elicit: async (params, info) => {
        asked.push(`${params.message} (${String(info.relatedTaskId !== null)})`);
        return { action: "accept", content: { confirm: true } };
      },
    });
    const call = await tasks.callTool("confirm_delete", { filename: "a.txt" });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(textOf(await call.task.result())).toBe("Deleted a.txt");
    expect(asked).toEqual(["Delete a.txt? (true)"]);
  });

  it("answers two questions pending together, each key once (X-UPD-2, X-UPD-3)", async () => {
    const asked: string[] = [];
    const tasks = stateless({
      elicit: async (params): Promise<{ action: "accept"; content: Record<string, string | boolean> }> => {
        asked.push(params.message);
        return params.message === "Your name?"
          ? { action: "accept", content: { name: "Ada" } }
          : { action: "accept", content: { confirm: true } };
      },
    });
    const call = await tasks.callTool("multi_input", {});
    if (call.kind !== "task") throw new Error("expected a task");
    expect(textOf(await call.task.result())).toBe("Hello Ada; proceeding");
    expect(asked.sort()).toEqual(["Proceed?", "Your name?"].sort());
  });

  it("runs MRTR rounds for a plain call whose handler asks twice: each answer sent with the sealed requestState (X-MRTR-1, X-MRTR-5)", async () => {
    const counted = countingFetch();
    const answers: Record<string, Record<string, unknown>> = { "Name?": { name: "Ada" }, "Sure?": { sure: true } };
    const tasks = new TaskClient(new StatelessConnection(server.url, { fetch: counted.fetch }), {
      elicit: async (params) => ({ action: "accept", content: answers[params.message] as never }),
    });
    clients.push(tasks);
    const call = await tasks.callTool("ask_plain", { greeting: "Hi" });
    expect(call).toEqual({ kind: "result", result: { content: [{ type: "text", text: "Hi Ada (sure)" }] } });
    expect(counted.methods.filter((m) => m === "tools/call")).toHaveLength(3);
  });

  it("answers the gather of a required tool in MRTR rounds before the task exists, then follows the task (X-MRTR-2)", async () => {
    const tasks = stateless({ elicit: async () => ({ action: "accept", content: { name: "Grace" } }) });
    const call = await tasks.callTool("test_tool_with_task", {});
    if (call.kind !== "task") throw new Error("expected a task");
    expect(textOf(await call.task.result())).toBe("Hello, Grace! The task finished.");
  });

  it("a one-off look (tasks.get) does not answer the task's questions", async () => {
    let asked = 0;
    const tasks = stateless({
      elicit: async () => {
        asked++;
        return { action: "accept", content: { confirm: true } };
      },
    });
    const call = await tasks.callTool("confirm_delete", { filename: "b.txt" });
    if (call.kind !== "task") throw new Error("expected a task");
    call.task.dispose();
    await expect.poll(async () => (await tasks.get(call.task.id)).status, { timeout: 10_000 }).toBe("input_required");
    expect(asked).toBe(0);
    await tasks.cancel(call.task.id);
  });
});

describe("TaskClient under 2026-07-28 — cancel and resume", () => {
  it("cancels a running task: tasks/cancel acks, and the task reads cancelled (X-CANCEL-1, X-CANCEL-2)", async () => {
    const tasks = stateless();
    const call = await tasks.callTool("slow_compute", { seconds: 60, label: "c" });
    if (call.kind !== "task") throw new Error("expected a task");
    expect((await tasks.cancel(call.task.id)).status).toBe("cancelled");
    expect((await call.task.outcome()).status).toBe("cancelled");
  });

  it("cancelling a terminal task is acked too (X-CONF-1): the task stays completed", async () => {
    const tasks = stateless();
    const call = await tasks.callTool("count_required", {});
    if (call.kind !== "task") throw new Error("expected a task");
    await call.task.result();
    expect((await tasks.cancel(call.task.id)).status).toBe("completed");
  });

  it("resumes a task by id from a new TaskClient (the requestor restarted) and answers its question there", async () => {
    // It declares elicitation (the tool needs it) but never waits, so never answers.
    const first = stateless({ elicit: async () => ({ action: "decline" }) });
    const call = await first.callTool("confirm_delete", { filename: "later.txt" });
    if (call.kind !== "task") throw new Error("expected a task");
    await first.close();
    const second = stateless({ elicit: async () => ({ action: "accept", content: { confirm: true } }) });
    const resumed = await second.resume(call.task.id);
    expect(textOf(await resumed.result())).toBe("Deleted later.txt");
  });

  it("rejects resuming an unknown id with the server's -32602", async () => {
    await expect(stateless().resume("no-such-task")).rejects.toBeInstanceOf(RemoteError);
  });

  it(
    "resumes a running task by id after the server was killed (SIGKILL) and restarted on the same SQLite file",
    { timeout: 60_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-client26-"));
      dirs.push(dir);
      const args = (port: string) => ["serve", "--demo", "--port", port, "--store", `sqlite:${join(dir, "tasks.db")}`];
      const before = CliProcess.spawn(args("0"));
      processes.push(before);
      const url = await before.url();
      const call = await (await connect(url)).callTool("batch", { ms: 2000 });
      if (call.kind !== "task") throw new Error("expected a task");
      await before.kill("SIGKILL");
      const after = CliProcess.spawn(args(new URL(url).port));
      processes.push(after);
      await after.url();
      const resumed = await (await connect(url)).resume(call.task.id);
      expect(textOf(await resumed.result())).toBe("slept 2000 ms");
    },
  );
});

describe("TaskClient under 2026-07-28 — progress of a task", () => {
  it("calls onProgress with the progress tasks/get carries while the task runs, in order, then gives the result", async () => {
    const tasks = await connect();
    expect(tasks.protocol).toBe("2026-07-28");
    const seen: number[] = [];
    const call = await tasks.callTool("progress_task", { steps: 3 }, { task: true, onProgress: (p) => seen.push(p.progress) });
    if (call.kind !== "task") throw new Error("expected a task");
    expect(textOf(await call.task.result())).toBe("3 steps");
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen.every((p) => p >= 1 && p <= 3)).toBe(true);
  });
});

describe("TaskClient under 2026-07-28 — progress of a plain call", () => {
  it("reads the notifications/progress of a plain call from its SSE answer, then the result", async () => {
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const call = await stateless().callTool("progress_plain", { steps: 3 }, { onProgress: (p) => seen.push(p) });
    expect(call).toEqual({ kind: "result", result: { content: [{ type: "text", text: "3 steps" }] } });
    expect(seen).toEqual([
      { progress: 1, total: 3, message: "step 1" },
      { progress: 2, total: 3, message: "step 2" },
      { progress: 3, total: 3, message: "step 3" },
    ]);
  });

  it("a plain call without progress asked for is one JSON answer, as before", async () => {
    const call = await stateless().callTool("progress_plain", { steps: 2 });
    expect(call).toEqual({ kind: "result", result: { content: [{ type: "text", text: "2 steps" }] } });
  });
});
