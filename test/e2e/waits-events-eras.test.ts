/**
 * Events and the tasks that wait for them, on a real `mcp-tasks serve --demo --workers 1` process
 * with bearer tokens (alice, mallory), an admin token and a SQLite file, in both eras from one
 * table through TaskClient (docs/durable-execution.md, Events): an event emitted before the task's
 * wait starts is seen (no lost wake-up); another principal's event of the same name wakes nothing;
 * an emit with a bad payload is refused with its 4xx and wakes nothing, and a payload the tool
 * cannot read ends the task with the tool's error result.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { TaskClient } from "../../src/client/task-client.js";
import { DEFAULT_MAX_EVENT_BYTES } from "../../src/runtime/engine/task-signals.js";
import { CliProcess, killAll } from "../support/cli-process.js";

const ALICE = "tok-alice-waits-events-6b1f";
const MALLORY = "tok-mallory-waits-events-c08e";
const ADMIN = "admin-waits-events-3d9a";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-waits-events-"));
const file = join(dir, "tasks.db");
let url: string;
const clients: TaskClient[] = [];

beforeAll(async () => {
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ [ALICE]: "alice", [MALLORY]: "mallory" }));
  const server = CliProcess.spawn([
    "serve",
    "--demo",
    "--store",
    `sqlite:${file}`,
    "--port",
    "0",
    "--workers",
    "1",
    "--inline-wait-ms",
    "0",
    "--auth-tokens",
    tokens,
    "--admin-token",
    ADMIN,
  ]);
  url = await server.url(60_000);
}, 90_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(protocol: ProtocolRevision): Promise<TaskClient> {
  const client = await TaskClient.connect(url, { protocol, token: ALICE });
  clients.push(client);
  return client;
}

/** POSTs an event as the holder of `token`; `path` is the part after /events/. */
async function emit(path: string, body: string, token: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(new URL(`/events/${path}`, url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function until(read: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await read())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type Task = Extract<Awaited<ReturnType<TaskClient["callTool"]>>, { kind: "task" }>["task"];

async function approval(client: TaskClient, action: string): Promise<Task> {
  const made = await client.callTool("approve", { action }, { task: true });
  if (made.kind !== "task") throw new Error("expected a task");
  return made.task;
}

/** Resolves once the task says it waits for its approval event. */
async function waitingForApproval(task: Task): Promise<void> {
  await until(async () => (await task.status()).statusMessage === `Waiting for approval/${task.id}`, `${task.id} to wait for its event`);
}

/** Whether the task's handler has started, as the file records it (the run queue's claim sets started_at). */
function started(taskId: string): boolean {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[string], { started_at: number | null }>("SELECT started_at FROM tasks WHERE id = ?").get(taskId)?.started_at != null;
  } finally {
    db.close();
  }
}

const textOf = (result: unknown): string =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

interface EraCase {
  protocol: ProtocolRevision;
  /** A result with isError: `failed` in 2025-11-25 (T-LIFE-4), `completed` carrying it in 2026-07-28. */
  toolErrorStatus: string;
}

const ERAS: EraCase[] = [
  { protocol: "2025-11-25", toolErrorStatus: "failed" },
  { protocol: "2026-07-28", toolErrorStatus: "completed" },
];

describe.each(ERAS)("events and waiting tasks under $protocol", { timeout: 60_000 }, ({ protocol, toolErrorStatus }) => {
  it("an event emitted before the task's wait starts is seen: an approval queued behind a running task completes as soon as it runs", async () => {
    const client = await connect(protocol);
    // The one handler slot is taken: the approval waits in the queue, its handler not started.
    const busy = await client.callTool("sleep", { ms: 3000 }, { task: true });
    if (busy.kind !== "task") throw new Error("expected a task");
    await until(async () => (await busy.task.status()).status === "working", "the sleep to run");
    const task = await approval(client, "early release");
    expect(started(task.id)).toBe(false);

    const early = await emit(`approval/${task.id}`, '{"approved": true, "by": "early bird"}', ALICE);
    // Nobody waits for it yet: it is stored for the event window.
    expect(early).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 0 } });
    expect(started(task.id)).toBe(false);
    expect(textOf(await task.result())).toBe("approved by early bird: early release");
    expect((await task.status()).status).toBe("completed");
    await busy.task.result();
  });

  it("events emitted the moment their approvals are created, racing each wait's start, wake every one", async () => {
    const client = await connect(protocol);
    const tasks = await Promise.all(Array.from({ length: 10 }, (_, i) => approval(client, `race ${i}`)));
    const emitted = await Promise.all(tasks.map((task, i) => emit(`approval/${task.id}`, `{"approved": true, "by": "racer ${i}"}`, ALICE)));
    // Each event met its wait once: at its emission (woken 1) or at the wait's start (woken 0).
    for (const e of emitted) {
      expect(e.status).toBe(200);
      expect([0, 1]).toContain(e.body["woken"]);
    }
    const texts = await Promise.all(tasks.map(async (task) => textOf(await task.result())));
    expect(texts).toEqual(tasks.map((_, i) => `approved by racer ${i}: race ${i}`));
  });

  it("another principal's event of the same name does not wake the task; its owner's does", async () => {
    const client = await connect(protocol);
    const task = await approval(client, "deploy v3");
    await waitingForApproval(task);

    const foreign = await emit(`approval/${task.id}`, '{"approved": true, "by": "mallory"}', MALLORY);
    expect(foreign).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 0 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await task.status()).toMatchObject({ status: "working", statusMessage: `Waiting for approval/${task.id}` });

    const own = await emit(`approval/${task.id}`, '{"approved": true, "by": "alice"}', ALICE);
    expect(own.body).toMatchObject({ woken: 1 });
    expect(textOf(await task.result())).toBe("approved by alice: deploy v3");
  });

  it("an emit with a bad payload is refused and wakes nothing; a payload the tool cannot read ends it with the tool's error", async () => {
    const client = await connect(protocol);
    const task = await approval(client, "drop table");
    await waitingForApproval(task);

    const notJson = await emit(`approval/${task.id}`, "{approved: yes", ALICE);
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ error: { message: expect.stringMatching(/JSON/) } });
    const tooBig = await emit(`approval/${task.id}`, JSON.stringify({ approved: true, by: "x".repeat(DEFAULT_MAX_EVENT_BYTES) }), ALICE);
    expect(tooBig.status).toBe(413);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await task.status()).toMatchObject({ status: "working", statusMessage: `Waiting for approval/${task.id}` });

    // Well-formed JSON, but not a decision: the event is delivered and the tool refuses it.
    const unreadable = await emit(`approval/${task.id}`, '{"approved": "maybe"}', ALICE);
    expect(unreadable.body).toMatchObject({ woken: 1 });
    const result = await task.result();
    expect(result).toMatchObject({ isError: true });
    expect(textOf(result)).toMatch(/^not a decision .*: drop table$/);
    expect((await task.status()).status).toBe(toolErrorStatus);
  });
});
