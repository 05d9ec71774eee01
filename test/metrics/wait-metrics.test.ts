/**
 * /metrics of durable waits over real HTTP, with real parked tasks: the parked gauge by what they
 * wait for (read from the store), the events emitted, and the waits woken by reason — each with a
 * fixed set of labels, whatever the tasks and event names.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { scrape, valueOf } from "../support/prometheus.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("/metrics of durable waits", () => {
  it("counts parked tasks by reason, events emitted and waits woken by reason, with bounded labels", async () => {
    fx = await startHttpServer();
    const app = fx.app;
    const { client } = await fx.connect();
    const parked = async (id: string) => (await app.engine.inspect.task(id))?.waitMode === "parked";

    const idle = await scrape(fx.url);
    for (const reason of ["input", "timer", "event"]) expect(valueOf(idle, "mcp_tasks_parked", { reason })).toBe(0);
    expect(valueOf(idle, "mcp_tasks_events_emitted_total")).toBe(0);

    const napping = await callToolAsTask(client, "nap", { ms: 3_600_000 });
    const approving = await callToolAsTask(client, "approve", { action: "ship" });
    const asking = await callToolAsTask(client, "ask", { question: "Name?" });
    for (const task of [napping, approving, asking]) await until(() => parked(task.task.taskId), `${task.task.taskId} to park`);

    const waiting = await scrape(fx.url);
    expect(valueOf(waiting, "mcp_tasks_parked", { reason: "timer" })).toBe(1);
    expect(valueOf(waiting, "mcp_tasks_parked", { reason: "event" })).toBe(1);
    expect(valueOf(waiting, "mcp_tasks_parked", { reason: "input" })).toBe(1);

    await app.emit(`approval/${approving.task.taskId}`, { approved: true, by: "ops" });
    await app.emit("nobody/waits/for/this", {});
    const short = await callToolAsTask(client, "nap", { ms: 100 });
    await until(async () => (await getTask(client, short.task.taskId)).status === "completed", "the short nap to end");
    await until(async () => (await getTask(client, approving.task.taskId)).status === "completed", "the approval to end");

    const after = await scrape(fx.url);
    expect(valueOf(after, "mcp_tasks_events_emitted_total")).toBe(2);
    expect(valueOf(after, "mcp_tasks_waits_woken_total", { reason: "event" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_waits_woken_total", { reason: "timer" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, "mcp_tasks_parked", { reason: "event" })).toBe(0);
    expect(valueOf(after, "mcp_tasks_parked", { reason: "timer" })).toBe(1);
    // No task id, owner or event name ever becomes a label.
    const labels = after
      .filter((s) => /^mcp_tasks_(parked|waits_woken_total|events_emitted_total)$/.test(s.name))
      .flatMap((s) => Object.entries(s.labels));
    expect(new Set(labels.map(([key]) => key))).toEqual(new Set(["reason"]));
    expect(labels.every(([, value]) => ["input", "timer", "event"].includes(value))).toBe(true);
    expect(valueOf(after, "mcp_tasks_timers_due")).toBe(0);
    expect(valueOf(after, "mcp_tasks_timers_overdue_seconds")).toBe(0);
  });

  it("timers due: the timers whose time has come and that the timer loop has not fired, and how overdue the earliest is", async () => {
    // The engine's clock an hour behind the wall clock /metrics reads: naps due ten and five
    // minutes ago by the wall clock are not due yet for the timer loop, which does not fire them.
    const behind = 3_600_000;
    fx = await startHttpServer({ app: { now: () => Date.now() - behind } });
    const app = fx.app;
    const { client } = await fx.connect();
    const wall = Date.now();
    const naps = await Promise.all(
      [wall - 600_000, wall - 300_000, wall + behind].map((until) => callToolAsTask(client, "nap", { until })),
    );
    for (const nap of naps) {
      await until(async () => (await app.engine.inspect.task(nap.task.taskId))?.waitMode === "parked", "the naps to park");
    }
    const due = await scrape(fx.url);
    expect(valueOf(due, "mcp_tasks_parked", { reason: "timer" })).toBe(3);
    expect(valueOf(due, "mcp_tasks_timers_due")).toBe(2);
    const overdue = valueOf(due, "mcp_tasks_timers_overdue_seconds") ?? 0;
    expect(overdue).toBeGreaterThanOrEqual(600);
    expect(overdue).toBeLessThan(660);
  });
});
