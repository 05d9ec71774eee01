/**
 * The official tasks-extension requestor, @modelcontextprotocol/ext-tasks 0.2.2 on
 * @modelcontextprotocol/client 2.x, drives `npm run conformance-server` — a real
 * process, the fixture tools of Appendix B, on a real SQLite file — under 2026-07-28.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { SerializedTaskReference, TaskOutcome, TaskState } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { connectRequestor, type Requestor } from "../support/ext-tasks-requestor.js";

const ROOT = join(import.meta.dirname, "../..");

interface ServerProcess {
  child: ChildProcess;
  url: URL;
}

const servers = new Set<ChildProcess>();

/**
 * `npm run conformance-server -- --port N --store sqlite:DB`, resolving with the URL it prints. One
 * process (tsx as a loader, not its CLI, which would fork a child): SIGKILL reaches the server.
 */
async function startServer(db: string, port = 0): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/conformance-server.ts", "--port", String(port), "--store", `sqlite:${db}`],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  servers.add(child);
  child.once("exit", () => servers.delete(child));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the conformance server exited (${code}) before listening`)));
  });
  return { child, url: new URL(line) };
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

function textOf(outcome: TaskOutcome<unknown>): string {
  expect(outcome.status, outcome.status === "failed" ? `failed: ${outcome.error.code} ${outcome.error.message}` : "").toBe("completed");
  const result = (outcome as { result: { content: Array<{ text?: string }> } }).result;
  return String(result.content[0]?.text);
}

let dir: string;
let server: ServerProcess;
const open: Requestor[] = [];
const clis: CliProcess[] = [];

async function requestor(options: Parameters<typeof connectRequestor>[1] = { endpointId: "ours" }, url = server.url): Promise<Requestor> {
  const connected = await connectRequestor(url, options);
  open.push(connected);
  return connected;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-ext-requestor-"));
  server = await startServer(join(dir, "tasks.db"));
}, 60_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close().catch(() => undefined)));
  await Promise.all(clis.splice(0).map((cli) => cli.kill("SIGTERM")));
});

afterAll(async () => {
  await Promise.all([...servers].map((child) => kill(child, "SIGTERM")));
  rmSync(dir, { recursive: true, force: true });
});

describe("the official requestor (@modelcontextprotocol/ext-tasks 0.2.2) against our server", () => {
  it("negotiates the extension from server/discover (X-CAP-1): a v2 task session that can cancel and answer input", async () => {
    const { client, session } = await requestor();
    expect(client.getProtocolEra()).toBe("modern");
    expect(session.capabilities).toMatchObject({ execution: true, cancellation: true, inputResponses: true });
  });

  it("runs a task tool to completion: CreateTaskResult, tasks/get polled until completed, the result read inline (X-NEW-1, X-GET-4)", async () => {
    const { session } = await requestor();
    const execution = await session.callTool("slow_compute", { seconds: 1.5, label: "lifecycle" });
    expect(execution.kind).toBe("task");
    const seen: TaskState[] = [];
    const { outcome } = await execution.settle({ onEvent: (event) => void (event.type === "task" && seen.push(event.task.status)) });
    expect(textOf(outcome)).toBe("Computed lifecycle in 1.5 s");
    expect(seen).toContain("working");
  });

  it("reads a tool result with isError as completed with that result (X-GET-8)", async () => {
    const { session } = await requestor();
    const { outcome } = await (await session.callTool("failing_job", {})).settle();
    expect(outcome.status, outcome.status === "failed" ? `failed: ${outcome.error.code} ${outcome.error.message}` : "").toBe("completed");
    expect((outcome as { result: { isError?: boolean } }).result.isError).toBe(true);
  });

  it("reads a JSON-RPC error as a failed task with that error (X-GET-6, X-GET-7)", async () => {
    const { session } = await requestor();
    const { outcome } = await (await session.callTool("protocol_error_job", {})).settle();
    expect(outcome.status).toBe("failed");
    expect(outcome.status === "failed" && { code: outcome.error.code, message: outcome.error.message }).toEqual({
      code: -32603,
      message: "API rate limit exceeded",
    });
  });

  it("answers an elicitation of a task through tasks/update and the task finishes with the answer (X-GET-3, X-UPD-1)", async () => {
    const asked: unknown[] = [];
    const { session } = await requestor({
      endpointId: "ours",
      onInputRequest: async (request) => {
        asked.push(request);
        return { action: "accept", content: { confirm: true } } as never;
      },
    });
    const { outcome } = await (await session.callTool("confirm_delete", { filename: "a.txt" })).settle();
    expect(textOf(outcome)).toBe("Deleted a.txt");
    expect(asked).toEqual([{ kind: "elicitation", params: expect.objectContaining({ mode: "form", message: "Delete a.txt?" }) }]);
  });

  it("answers two elicitations pending together (X-UPD-2)", async () => {
    const { session } = await requestor({
      endpointId: "ours",
      onInputRequest: async (request) => {
        const message = request.kind === "elicitation" ? String(request.params["message"]) : "";
        return (
          message === "Your name?" ? { action: "accept", content: { name: "Ada" } } : { action: "accept", content: { confirm: true } }
        ) as never;
      },
    });
    const { outcome } = await (await session.callTool("multi_input", {})).settle();
    expect(textOf(outcome)).toBe("Hello Ada; proceeding");
  });

  it("cancels a running task: tasks/cancel, and tasks/get then reads cancelled (X-CANCEL-1, X-CANCEL-2)", async () => {
    const { session } = await requestor();
    const execution = await session.callTool("slow_compute", { seconds: 60, label: "cancelled" });
    expect(execution.kind).toBe("task");
    if (execution.kind !== "task") return;
    await execution.cancel();
    expect((await execution.result()).status).toBe("cancelled");
    const { session: other } = await requestor({ endpointId: "other" });
    expect((await other.task(execution.handle.taskId).snapshot()).status).toBe("cancelled");
  });

  it("resumes a running task by its serialized reference after `mcp-tasks serve --demo` was killed (SIGKILL) and restarted on the same SQLite file: re-run there, then completed (X-REQ-3)", async () => {
    const db = join(dir, "serve-restart.db");
    const args = (port: string) => ["serve", "--demo", "--port", port, "--store", `sqlite:${db}`];
    const first = CliProcess.spawn(args("0"));
    clis.push(first);
    const url = new URL(await first.url());
    const { session } = await requestor({ endpointId: "serve" }, url);
    // batch: taskSupport required, retryable (a task the process died in is re-run on start).
    const execution = await session.callTool("batch", { ms: 3000 });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((ref) => void (reference = ref));
    expect((await session.task(execution.handle.taskId).snapshot()).status).toBe("working");

    expect((await first.kill("SIGKILL")).signal).toBe("SIGKILL");
    const second = CliProcess.spawn(args(url.port));
    clis.push(second);
    const again = new URL(await second.url());
    const { session: resumed } = await requestor({ endpointId: "serve" }, again);
    const { outcome } = await (await resumed.resumeTask(reference!)).settle();
    expect(textOf(outcome)).toBe("slept 3000 ms");
  }, 60_000);

  it("reads a task that was waiting for input when the server was killed (SIGKILL) as failed, -32603, after a restart on the same SQLite file (its tool is not retryable)", async () => {
    const db = join(dir, "restart.db");
    const first = await startServer(db);
    const { session } = await requestor({ endpointId: "restarting" }, first.url);
    const execution = await session.callTool("confirm_delete", { filename: "kept.txt" });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    let reference: SerializedTaskReference | undefined;
    await execution.handoff((ref) => void (reference = ref));
    await expect
      .poll(async () => (await session.task(execution.handle.taskId).snapshot()).status, { timeout: 10_000 })
      .toBe("input_required");

    await kill(first.child, "SIGKILL");
    const second = await startServer(db, Number(first.url.port));
    const { session: resumed } = await requestor({ endpointId: "restarting" }, second.url);
    const { outcome } = await (await resumed.resumeTask(reference!)).settle();
    expect(outcome.status === "failed" && outcome.error.code).toBe(-32603);
  }, 60_000);
});
