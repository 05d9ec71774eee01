/**
 * A parked wait in the task's trace (docs/tracing.md, Waits), with a real `mcp-tasks serve --demo`
 * process on a SQLite file and a real OTLP/HTTP collector: the run that parks ends its execution
 * span marked parked; the wait is an `mcp-tasks.wait` span under it, from the wait's start to what
 * ended it (the timer, the event, the answer), with its reason, event and until; the run that
 * resumes the task after the wake is a second execution span in the same trace, linked to the wait
 * and to the parked run — in another process too, after a kill -9. A wait that is never parked is
 * the same span under its one run. The spans are the engine's, the same whichever era created the
 * task; the tasks here are created through 2025-11-25.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TaskClient } from "../../src/client/task-client.js";
import { CliProcess, killAll } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import type { ReceivedSpan } from "../support/otlp/received.js";

const SERVICE = "wait-trace";
const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-wait-trace-"));
let receiver: OtlpReceiver;
let url: string;
let client: TaskClient;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  const server = CliProcess.spawn(
    [
      "serve",
      "--demo",
      "--tools",
      "test/support/wait-tools.ts",
      "--store",
      `sqlite:${join(dir, "tasks.db")}`,
      "--port",
      "0",
      "--inline-wait-ms",
      "0",
    ],
    { env: receiver.env("http/json", SERVICE) },
  );
  url = await server.url();
  client = await TaskClient.connect(url, { protocol: "2025-11-25" });
}, 30_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await killAll();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ms = (nanos: bigint): number => Number(nanos / 1_000_000n);
/**
 * A wait's times are the store's (Date.now(), in ms); a run's span times the SDK's (the
 * performance clock): the two may be a few ms apart.
 */
const SKEW = 50_000_000n;
const textOf = (result: unknown): string =>
  ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");

/** The parked run's execution span, the wait's span and the resumed run's execution span of a task. */
async function waitTrace(tool: string, taskId: string): Promise<{ parked: ReceivedSpan; wait: ReceivedSpan; resumed: ReceivedSpan }> {
  const ours = (s: ReceivedSpan): boolean => s.resource["service.name"] === SERVICE && s.attributes["mcp.task.id"] === taskId;
  const parked = await receiver.span(
    (s) => ours(s) && s.name === `execute_tool ${tool}` && s.attributes["mcp.task.parked"] === true,
    "the parked run",
  );
  const wait = await receiver.span((s) => ours(s) && s.name === "mcp-tasks.wait", "the wait's span");
  const resumed = await receiver.span(
    (s) => ours(s) && s.name === `execute_tool ${tool}` && s.attributes["mcp.task.resumed"] === true,
    "the resumed run",
  );
  return { parked, wait, resumed };
}

/** The shape every parked wait has: under the parked run, after it; the resumed run linked to both. */
function expectParkedWait({ parked, wait, resumed }: { parked: ReceivedSpan; wait: ReceivedSpan; resumed: ReceivedSpan }): void {
  expect(parked.events.map((e) => e.name)).toContain("mcp.task.parked");
  expect(parked.attributes["mcp.task.status"]).toBeUndefined();
  expect(wait.traceId).toBe(parked.traceId);
  expect(wait.parentSpanId).toBe(parked.spanId);
  expect(wait.attributes["mcp.task.wait.parked"]).toBe(true);
  // The wait starts in the parked run and ends when the resumed run could start.
  expect(wait.startTimeUnixNano + SKEW).toBeGreaterThanOrEqual(parked.startTimeUnixNano);
  expect(wait.startTimeUnixNano).toBeLessThanOrEqual(parked.endTimeUnixNano + SKEW);
  expect(wait.endTimeUnixNano).toBeLessThanOrEqual(resumed.startTimeUnixNano + SKEW);
  // The resumed run: the same trace, the same parent (the creating tools/call), linked to the wait and to the parked run.
  expect(resumed.traceId).toBe(parked.traceId);
  expect(resumed.parentSpanId).toBe(parked.parentSpanId);
  expect(resumed.attributes["mcp.task.status"]).toBe("completed");
  expect(resumed.links).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        traceId: wait.traceId,
        spanId: wait.spanId,
        attributes: expect.objectContaining({ "mcp.task.link": "wait" }),
      }),
      expect.objectContaining({
        traceId: parked.traceId,
        spanId: parked.spanId,
        attributes: expect.objectContaining({ "mcp.task.link": "parked_run" }),
      }),
    ]),
  );
}

describe("a parked wait in the task's trace", { timeout: 60_000 }, () => {
  it("a nap: the wait's span (reason sleep, until) covers the sleep under the parked run, and the resumed run links to it", async () => {
    const made = await client.callTool("nap", { ms: 1500 }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    await made.task.result();
    const trace = await waitTrace("nap", made.task.id);
    expectParkedWait(trace);
    const { wait } = trace;
    expect(wait.attributes).toMatchObject({
      "mcp.task.wait.reason": "sleep",
      "mcp.task.wait.outcome": "timer",
      "mcp.task.wait.until": expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const until = Date.parse(String(wait.attributes["mcp.task.wait.until"]));
    // It lasts the nap: from its start to the timer's firing, at or after `until`.
    expect(ms(wait.endTimeUnixNano - wait.startTimeUnixNano)).toBeGreaterThanOrEqual(1400);
    expect(ms(wait.endTimeUnixNano)).toBeGreaterThanOrEqual(until);
  });

  it("an approval: the wait's span (reason event, its name) lasts until the event, and the resumed run links to it", async () => {
    const made = await client.callTool("approve", { action: "ship" }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    const taskId = made.task.id;
    await receiver.span(
      (s) => s.resource["service.name"] === SERVICE && s.attributes["mcp.task.id"] === taskId && s.attributes["mcp.task.parked"] === true,
      "the parked run",
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const emittedAt = Date.now();
    const emitted = await fetch(new URL(`/events/approval/${taskId}`, url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approved: true, by: "ops" }),
    });
    expect(emitted.status).toBe(200);
    expect(await made.task.result()).toMatchObject({ content: [{ type: "text", text: "approved by ops: ship" }] });
    const trace = await waitTrace("approve", taskId);
    expectParkedWait(trace);
    const { wait } = trace;
    expect(wait.attributes).toMatchObject({
      "mcp.task.wait.reason": "event",
      "mcp.task.wait.event": `approval/${taskId}`,
      "mcp.task.wait.outcome": "event",
    });
    // It ends at the event.
    expect(Math.abs(ms(wait.endTimeUnixNano) - emittedAt)).toBeLessThan(1000);
    expect(ms(wait.endTimeUnixNano - wait.startTimeUnixNano)).toBeGreaterThanOrEqual(500);
  });

  it("a question answered while its task is parked: the wait's span (reason question) ends at the resumed run", async () => {
    const answering = await TaskClient.connect(url, {
      protocol: "2025-11-25",
      elicit: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return { action: "accept", content: { answer: "yes" } };
      },
    });
    try {
      const made = await answering.callTool("ask", { question: "ship?" }, { task: true });
      if (made.kind !== "task") throw new Error("expected a task");
      expect(await made.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: yes" }] });
      const trace = await waitTrace("ask", made.task.id);
      expectParkedWait(trace);
      expect(trace.wait.attributes).toMatchObject({
        "mcp.task.wait.reason": "question",
        "mcp.method.name": "elicitation/create",
        "mcp.task.wait.outcome": "answer",
      });
      expect(ms(trace.wait.endTimeUnixNano - trace.wait.startTimeUnixNano)).toBeGreaterThanOrEqual(900);
    } finally {
      await answering.close().catch(() => {});
    }
  });

  it("a nap parked by a process killed with SIGKILL: the next process records the wait's span under the dead run, and links to it", async () => {
    const file = join(dir, "restart.db");
    const service = `${SERVICE}-restart`;
    const start = () =>
      CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--inline-wait-ms", "0"], {
        env: receiver.env("http/json", service),
      });
    const first = start();
    const firstUrl = await first.url();
    const requestor = await TaskClient.connect(firstUrl, { protocol: "2025-11-25" });
    const made = await requestor.callTool("nap", { ms: 3000 }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    const taskId = made.task.id;
    const ours = (s: ReceivedSpan): boolean => s.resource["service.name"] === service && s.attributes["mcp.task.id"] === taskId;
    const parked = await receiver.span((s) => ours(s) && s.attributes["mcp.task.parked"] === true, "the parked run");
    await requestor.close().catch(() => {});
    await first.kill("SIGKILL");

    const second = start();
    const again = await TaskClient.connect(await second.url(), { protocol: "2025-11-25" });
    try {
      expect(textOf(await again.task(taskId).result())).toMatch(/^napped until /);
    } finally {
      await again.close().catch(() => {});
    }
    const wait = await receiver.span((s) => ours(s) && s.name === "mcp-tasks.wait", "the wait's span");
    const resumed = await receiver.span((s) => ours(s) && s.attributes["mcp.task.resumed"] === true, "the resumed run");
    expectParkedWait({ parked, wait, resumed });
    expect(ms(wait.endTimeUnixNano - wait.startTimeUnixNano)).toBeGreaterThanOrEqual(2900);
  });

  it("a wait that is never parked (a tool that cannot be replayed) is the same span under its one run, which links to nothing", async () => {
    const made = await client.callTool("nap-in-memory", { ms: 800 }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    await made.task.result();
    const ours = (s: ReceivedSpan): boolean => s.resource["service.name"] === SERVICE && s.attributes["mcp.task.id"] === made.task.id;
    const run = await receiver.span((s) => ours(s) && s.name === "execute_tool nap-in-memory", "the run");
    const wait = await receiver.span((s) => ours(s) && s.name === "mcp-tasks.wait", "the wait's span");
    expect(wait.parentSpanId).toBe(run.spanId);
    expect(wait.attributes).toMatchObject({
      "mcp.task.wait.reason": "sleep",
      "mcp.task.wait.outcome": "timer",
      "mcp.task.wait.parked": false,
    });
    expect(ms(wait.endTimeUnixNano - wait.startTimeUnixNano)).toBeGreaterThanOrEqual(750);
    expect(wait.endTimeUnixNano).toBeLessThanOrEqual(run.endTimeUnixNano + SKEW);
    expect(run.attributes["mcp.task.parked"]).toBeUndefined();
    expect(run.attributes["mcp.task.status"]).toBe("completed");
    expect(run.links).toEqual([]);
  });

  it("a task parked at two waits in turn: each wait is one span, recorded once, though the last run replays past both", async () => {
    const made = await client.callTool("nap-twice", { ms: 700 }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    await made.task.result();
    const ours = (s: ReceivedSpan): boolean => s.resource["service.name"] === SERVICE && s.attributes["mcp.task.id"] === made.task.id;
    await receiver.span((s) => ours(s) && s.attributes["mcp.task.status"] === "completed", "the last run");
    // Let a duplicate, if any were made, reach the collector.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const runs = receiver.spans.filter((s) => ours(s) && s.name === "execute_tool nap-twice");
    expect(runs).toHaveLength(3);
    const waits = receiver.spans.filter((s) => ours(s) && s.name === "mcp-tasks.wait");
    expect(waits).toHaveLength(2);
    const [first, second] = [...runs].sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    const [third] = [...runs].sort((a, b) => Number(b.startTimeUnixNano - a.startTimeUnixNano));
    expect(waits.map((w) => w.parentSpanId).sort()).toEqual([first!.spanId, second!.spanId].sort());
    // The second run resumed after the first wait and parked at the second; the third linked to the second wait only.
    expect(second!.attributes).toMatchObject({ "mcp.task.resumed": true, "mcp.task.parked": true });
    const secondWait = waits.find((w) => w.parentSpanId === second!.spanId)!;
    expect(third!.links.filter((l) => l.attributes["mcp.task.link"] === "wait").map((l) => l.spanId)).toEqual([secondWait.spanId]);
  });
});
