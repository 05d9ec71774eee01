/**
 * A worker cut off from PostgreSQL, with a TCP proxy (test/support/tcp-proxy.ts) between that one
 * worker and the server: its connections cut (they drop; it reconnects), or held — packets
 * black-holed, sockets open — for longer than its lease while it runs long tasks, so another
 * worker takes them over and the cut-off one's stalled writes land late. Every write a worker
 * makes for a claimed task names its claim, so the late ones change nothing: each task's result,
 * checkpoints and answer are the current claim's (the tools name the worker that ran them,
 * test/support/fencing-tools.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import type { CliProcess } from "../support/cli-process.js";
import { pgQuery, TEST_PG_URL } from "../support/postgres.js";
import { isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";
import { TaskLoad } from "../support/task-load.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const LEASE_MS = 3000;
const PAUSE_MS = 9000;

let cluster: Cluster;
let proxy: TcpProxy;
/** The worker behind the proxy. */
let cutOff: CliProcess;

beforeAll(async () => {
  cluster = await Cluster.start({
    fronts: 1,
    workers: 0,
    concurrency: 8,
    leaseMs: LEASE_MS,
    logLevel: "debug",
    toolArgs: ["--demo", "--tools", "test/support/fencing-tools.ts"],
  });
  proxy = await TcpProxy.start(TEST_PG_URL);
  cutOff = await cluster.startWorker({ store: proxy.via(cluster.store), env: { MCP_TASKS_TEST_WORKER: "A" } });
}, 90_000);

afterAll(async () => {
  proxy?.resume();
  await cluster?.stop();
  await proxy?.stop();
});

const front = (): string => String(cluster.urls[0]);

/** Waits until `load` has ended `n` more tasks. */
async function moreTasks(load: TaskLoad, n: number, timeoutMs = 30_000): Promise<void> {
  const goal = load.count + n;
  const deadline = Date.now() + timeoutMs;
  while (load.count < goal) {
    if (Date.now() > deadline) {
      const worker =
        cutOff.child.exitCode !== null || cutOff.child.signalCode !== null
          ? `exited (${cutOff.child.exitCode ?? cutOff.child.signalCode})`
          : "running";
      throw new Error(
        `only ${load.count} of ${goal} tasks ended; lanes broken: ${load.broken.join("; ")}; the cut-off worker is ${worker}; its last lines: ${cutOff.stderrText.split("\n").slice(-12).join("\n")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const claimedBy = (worker: CliProcess, taskId: string, attempt: number) =>
  worker.stderr.waitFor(
    (l) => l["msg"] === "claimed task" && l["taskId"] === taskId && l["attempt"] === attempt,
    `attempt ${attempt} of ${taskId}`,
    30_000,
  );

describe("cluster: one worker's connections to PostgreSQL cut", { timeout: 120_000 }, () => {
  it("an idle worker whose every connection drops keeps running (it listens on no port) and claims the next task", async () => {
    await cutOff.stderr.waitFor((l) => l["msg"] === "worker started", "the worker to start");
    // Cut again and again: some cut lands while nothing but the dropped sockets held the process.
    for (let i = 0; i < 20; i++) {
      proxy.cut();
      await new Promise((resolve) => setTimeout(resolve, 37 * (i % 7) + 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect({ exitCode: cutOff.child.exitCode, signal: cutOff.child.signalCode }).toEqual({ exitCode: null, signal: null });
    const taskId = String((await statelessResult(front(), "tools/call", { name: "whoami", arguments: { ms: 10 } }))["taskId"]);
    await claimedBy(cutOff, taskId, 1);
    expect(await pollTask(front(), taskId, isTerminal)).toMatchObject({
      status: "completed",
      result: { structuredContent: { worker: "A" } },
    });
  });

  it("cut twice under load: 0 finished tasks failed, 0 -32603, and the worker goes on", async () => {
    const load = await TaskLoad.start(cluster.urls);
    try {
      await moreTasks(load, 15);
      proxy.cut();
      await moreTasks(load, 15);
      proxy.cut();
      await moreTasks(load, 15);
    } finally {
      await load.stop();
    }
    expect(load.broken).toEqual([]);
    expect(load.errors.filter((e) => e.code !== -32003)).toEqual([]);
    expect(load.ended.filter((t) => t.status !== "completed")).toEqual([]);
    expect(
      cutOff.stderr.filter(
        (l) => l["msg"] === "could not store task outcome" || l["msg"] === "the outcome could not be stored before the lease ran out",
      ),
    ).toEqual([]);
  });
});

describe(
  `cluster: one worker's connections held for ${PAUSE_MS} ms (--lease-ms ${LEASE_MS}) while it runs long tasks`,
  { timeout: 120_000 },
  () => {
    const plain: string[] = [];
    let steps = "";
    let asks = "";
    let takeover: CliProcess;
    let pausedAt = 0;
    const ended = new Map<string, Record<string, unknown>>();

    beforeAll(async () => {
      for (let i = 0; i < 4; i++)
        plain.push(String((await statelessResult(front(), "tools/call", { name: "whoami", arguments: { ms: 8000 } }))["taskId"]));
      steps = String((await statelessResult(front(), "tools/call", { name: "whosteps", arguments: { count: 3, ms: 6000 } }))["taskId"]);
      asks = String((await statelessResult(front(), "tools/call", { name: "whoasks", arguments: { question: "Colour?" } }))["taskId"]);
      for (const id of [...plain, steps, asks]) await claimedBy(cutOff, id, 1);
      await pollTask(front(), asks, (t) => t["status"] === "input_required");
      // The steps task has checkpointed a step of its own before the worker is cut off.
      for (;;) {
        const { rows } = await pgQuery(`SELECT count(*)::int AS n FROM ${cluster.schema}.task_checkpoints WHERE task_id = $1`, [steps]);
        if ((rows[0] as { n: number }).n >= 1) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }

      pausedAt = Date.now();
      proxy.pause();
      takeover = await cluster.startWorker({ env: { MCP_TASKS_TEST_WORKER: "B" } });
      for (const id of [...plain, steps, asks]) await claimedBy(takeover, id, 2);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, pausedAt + PAUSE_MS - Date.now())));
      proxy.resume();

      // Answered once the cut-off worker is back: both runs hear the answer; only the current one may use it.
      const waiting = await pollTask(front(), asks, (t) => t["status"] === "input_required", {}, 20_000);
      const [key] = Object.keys(waiting["inputRequests"] as object);
      await statelessResult(front(), "tasks/update", {
        taskId: asks,
        inputResponses: { [String(key)]: { action: "accept", content: { answer: "teal" } } },
      });
      for (const id of [...plain, steps, asks]) ended.set(id, await pollTask(front(), id, isTerminal, {}, 40_000));
    }, 120_000);

    it("the other worker takes every task over as attempt 2", () => {
      // beforeAll waited for each "claimed task" line with attempt 2 on the other worker.
      expect([...ended.values()].map((t) => t["status"])).toEqual([
        "completed",
        "completed",
        "completed",
        "completed",
        "completed",
        "completed",
      ]);
    });

    it("every task's result is the current claim's: 0 overwritten by the cut-off worker's late outcome", () => {
      for (const id of plain) expect(ended.get(id)).toMatchObject({ status: "completed", result: { structuredContent: { worker: "B" } } });
    });

    it("checkpoints: the result keeps the cut-off worker's steps from before it was cut off, and every later one is the current claim's", () => {
      const result = ended.get(steps)?.["result"] as {
        structuredContent: { worker: string; steps: Array<{ worker: string; at: number }> };
      };
      expect(result.structuredContent.worker).toBe("B");
      const fromA = result.structuredContent.steps.filter((s) => s.worker === "A");
      expect(fromA.length).toBeGreaterThanOrEqual(1);
      for (const step of fromA) expect(step.at).toBeLessThan(pausedAt);
      const firstB = result.structuredContent.steps.findIndex((s) => s.worker === "B");
      expect(result.structuredContent.steps.slice(firstB).every((s) => s.worker === "B")).toBe(true);
    });

    it("a task waiting for input: the same question is re-attached, and the answer is used by the current claim only", () => {
      expect(ended.get(asks)).toMatchObject({ status: "completed", result: { structuredContent: { worker: "B", answer: "teal" } } });
    });

    it("the cut-off worker logs each write it lost as dropped, with task id, worker and attempt", async () => {
      for (const id of plain) {
        const line = await cutOff.stderr.waitFor(
          (l) => l["taskId"] === id && String(l["msg"]).startsWith("write of a superseded claim dropped") && l["dropped"] === "completed",
          `the dropped outcome of ${id}`,
          20_000,
        );
        expect(line).toMatchObject({ level: 40, workerId: expect.stringMatching(/^worker-/), attempt: 1 });
      }
    });

    it("lastUpdatedAt never went backwards: the timeline of each task is in order", async () => {
      for (const id of [...plain, steps, asks]) {
        const { rows } = await pgQuery(`SELECT at FROM ${cluster.schema}.task_history WHERE task_id = $1 ORDER BY seq`, [id]);
        const at = rows.map((r) => Number((r as { at: string }).at));
        expect(at).toEqual([...at].sort((a, b) => a - b));
      }
    });
  },
);
