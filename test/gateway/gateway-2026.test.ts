/**
 * `mcp-tasks gateway` under the 2026-07-28 era (the tasks extension io.modelcontextprotocol/tasks),
 * in front of the real `@modelcontextprotocol/server-everything` over stdio, which implements no
 * tasks, driven by the official requestor (@modelcontextprotocol/ext-tasks on
 * @modelcontextprotocol/client 2.x) and by our CLI (`mcp-tasks call … --protocol 2026-07-28`): a slow
 * upstream tool becomes a task (X-NEW-1), the upstream's elicitation becomes the task's
 * inputRequest answered through tasks/update (X-GET-3, X-UPD-1), a cancel ends it (X-CANCEL-1)
 * and the result is the upstream's.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskOutcome, TaskState } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import { connectRequestor, type Requestor } from "../support/ext-tasks-requestor.js";
import { EVERYTHING, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const LONG = "trigger-long-running-operation";
const ELICIT = "trigger-elicitation-request";

let gateway: GatewayProcess;
let dir: string;
const open: Requestor[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-2026-"));
  gateway = await startGateway(["--store", `sqlite:${join(dir, "gateway.db")}`, "--upstream-stdio", nodeCommand(EVERYTHING, "stdio")]);
}, 60_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close().catch(() => undefined)));
});

afterAll(async () => {
  // The upstream first: it holds the gateway's stderr open (and does not exit when its stdin closes).
  for (const pid of gateway?.upstreamPids() ?? []) process.kill(pid, "SIGKILL");
  await gateway?.cli.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function requestor(options: Parameters<typeof connectRequestor>[1] = { endpointId: "gateway" }): Promise<Requestor> {
  const connected = await connectRequestor(new URL(gateway.url), options);
  open.push(connected);
  return connected;
}

function resultOf(outcome: TaskOutcome<unknown>): { content: Array<{ type: string; text?: string }> } {
  expect(outcome.status, outcome.status === "failed" ? `failed: ${outcome.error.code} ${outcome.error.message}` : "").toBe("completed");
  return (outcome as { result: { content: Array<{ type: string; text?: string }> } }).result;
}

/** `mcp-tasks call|tasks … --protocol 2026-07-28` against the gateway, with a state directory of its own. */
function cli(args: string[]) {
  return runCli([...args, "--protocol", "2026-07-28"], { env: { MCP_TASKS_STATE_DIR: join(dir, "cli-state") }, timeoutMs: 60_000 });
}

const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe("gateway under 2026-07-28: the official requestor (@modelcontextprotocol/ext-tasks)", { timeout: 90_000 }, () => {
  it("negotiates the extension with the gateway (X-CAP-1)", async () => {
    const { client, session } = await requestor();
    expect(client.getProtocolEra()).toBe("modern");
    expect(session.capabilities).toMatchObject({ execution: true, cancellation: true, inputResponses: true });
  });

  it("a slow upstream tool becomes a task, polled to completion; the result is the upstream's (X-NEW-1, X-GET-4)", async () => {
    const { session } = await requestor();
    const execution = await session.callTool(LONG, { duration: 2, steps: 2 });
    expect(execution.kind).toBe("task");
    const seen: TaskState[] = [];
    const { outcome } = await execution.settle({ onEvent: (event) => void (event.type === "task" && seen.push(event.task.status)) });
    expect(resultOf(outcome).content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 2." }]);
    expect(seen).toContain("working");
  });

  it("a quick upstream tool is answered inline, without a task (optional tool, within inlineWaitMs)", async () => {
    const { session } = await requestor();
    const execution = await session.callTool("echo", { message: "inline" });
    expect(execution.kind).not.toBe("task");
    const { outcome } = await execution.settle();
    expect(resultOf(outcome).content).toEqual([{ type: "text", text: "Echo: inline" }]);
  });

  it("the upstream's elicitation becomes the task's inputRequest; the answer, sent through tasks/update, goes back upstream (X-GET-3, X-UPD-1)", async () => {
    const asked: unknown[] = [];
    const { session } = await requestor({
      endpointId: "gateway",
      onInputRequest: async (request) => {
        asked.push(request);
        return { action: "accept", content: { name: "Ada Lovelace" } } as never;
      },
    });
    const execution = await session.callTool(ELICIT, {});
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(JSON.stringify(resultOf(outcome).content)).toContain("- Name: Ada Lovelace");
    // Answered on the task (a stateless 2026-07-28 request has no session to answer a server request on: tasks/update).
    await gateway.cli.stderr.waitFor(
      (l) => l["audit"] === "input_answered" && l["taskId"] === execution.handle?.taskId,
      "the gateway to record the answer",
    );
    expect(asked).toEqual([
      {
        kind: "elicitation",
        params: expect.objectContaining({
          message: "Please provide inputs for the following fields:",
          requestedSchema: expect.objectContaining({ required: ["name"] }),
        }),
      },
    ]);
  });

  it("an answer that does not fit the relayed form is refused with -32602 (X-UPD-4): the gateway's task keeps the question", async () => {
    const { session } = await requestor({
      endpointId: "gateway",
      onInputRequest: async () => ({ action: "accept", content: { name: 42 } }) as never,
    });
    const execution = await session.callTool(ELICIT, {});
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome).toMatchObject({ status: "failed", error: { code: -32602 } });
    if (execution.kind !== "task") return;
    const { session: other } = await requestor({ endpointId: "gateway-look" });
    expect((await other.task(execution.handle.taskId).snapshot()).status).toBe("input_required");
    // The upstream's question would stay open on the shared upstream otherwise.
    await other.task(execution.handle.taskId).cancel();
  });

  it("cancels a running upstream call: tasks/cancel, then cancelled for any requestor (X-CANCEL-1, X-CANCEL-2); the upstream keeps serving", async () => {
    const { session } = await requestor();
    const execution = await session.callTool(LONG, { duration: 60, steps: 60 });
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    await execution.cancel();
    expect((await execution.result()).status).toBe("cancelled");
    const { session: other } = await requestor({ endpointId: "other" });
    expect((await other.task(execution.handle.taskId).snapshot()).status).toBe("cancelled");
    const { outcome } = await (await session.callTool("echo", { message: "after" })).settle();
    expect(resultOf(outcome).content).toEqual([{ type: "text", text: "Echo: after" }]);
  });
});

describe("gateway under 2026-07-28: mcp-tasks call --protocol 2026-07-28", { timeout: 90_000 }, () => {
  it("follows a slow upstream tool's task to the upstream's result", async () => {
    const run = await cli(["call", gateway.url, LONG, '{"duration":2,"steps":2}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 2." }] },
    });
    const journal = readFileSync(join(dir, "cli-state", "journal.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(journal.find((e) => e["op"] === "created" && e["name"] === LONG)).toMatchObject({ protocol: "2026-07-28", target: gateway.url });
  });

  it("answers the upstream's elicitation with --answer, sent through tasks/update", async () => {
    const run = await cli(["call", gateway.url, ELICIT, "{}", "--answer", '{"name":"Grace Hopper"}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const out = lastJson(run.stdout);
    expect(out).toMatchObject({ status: "completed" });
    expect(JSON.stringify(out["result"])).toContain("- Name: Grace Hopper");
  });

  it("--detach, tasks cancel, tasks get: cancelled", async () => {
    const detached = await cli(["call", gateway.url, LONG, '{"duration":60,"steps":60}', "--detach"]);
    expect(detached.code, detached.stderr).toBe(0);
    const id = detached.stdout.trim();
    expect(lastJson((await cli(["tasks", "get", gateway.url, id, "--json"])).stdout)).toMatchObject({ taskId: id, status: "working" });
    const cancelled = await cli(["tasks", "cancel", gateway.url, id, "--json"]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(lastJson(cancelled.stdout)).toMatchObject({ taskId: id, status: "cancelled" });
    expect(lastJson((await cli(["tasks", "get", gateway.url, id, "--json"])).stdout)).toMatchObject({ status: "cancelled" });
  });
});
