/**
 * A new task wakes one worker (src/runtime/cluster/worker-pool.ts), in real processes: two
 * `mcp-tasks worker`s, the older first in the wake order. A burst of tasks all completes; tasks
 * created one at a time are claimed by the first worker alone, the second never sending the claim
 * that would find nothing; and with the first worker SIGKILLed — still listed as alive until its
 * heartbeat runs out — a new task is run by the second one within its standby, not at the safety
 * re-check or a lease later.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import type { CliProcess, LogLine } from "../support/cli-process.js";
import { isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";

let cluster: Cluster;
/** Started first: first in the wake order. */
let first: CliProcess;
let second: CliProcess;

const placed =
  (place: number) =>
  (l: LogLine): boolean =>
    l["msg"] === "this worker's place in the wake order changed" && l["place"] === place;

beforeAll(async () => {
  // The CLI's lease (30 s): a killed worker stays in the others' view for the whole test.
  // The burst is one anonymous caller, over the per-caller rate and active-task cap by design.
  cluster = await Cluster.start({
    fronts: 1,
    workers: 0,
    concurrency: 4,
    frontArgs: ["--rate-limit", "off", "--max-active-tasks", "1000"],
  });
  first = await cluster.startWorker();
  await first.stderr.waitFor(placed(0), "the first worker's place");
  second = await cluster.startWorker();
  await second.stderr.waitFor(placed(1), "the second worker's place");
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

const front = (): string => String(cluster.urls[0]);

/** A `sleep` task to its end; its result inline when the front saw it end within its inline wait. */
async function sleepTask(ms: number): Promise<Record<string, unknown>> {
  const answer = await statelessResult(front(), "tools/call", { name: "sleep", arguments: { ms } });
  if (answer["resultType"] !== "task") return answer;
  const done = await pollTask(front(), String(answer["taskId"]), isTerminal, {}, 30_000);
  return (done["result"] ?? done) as Record<string, unknown>;
}

const claims = (worker: CliProcess): LogLine[] => worker.stderr.items.filter((l) => l["msg"] === "claim");

describe("cluster: a new task wakes one worker", { timeout: 60_000 }, () => {
  it("a burst of 120 tasks over 2 workers of 4 slots all completes", async () => {
    const results = await Promise.all(Array.from({ length: 120 }, () => sleepTask(0)));
    expect(results.filter((r) => JSON.stringify(r["content"]) === JSON.stringify([{ type: "text", text: "slept 0 ms" }]))).toHaveLength(
      120,
    );
  });

  it("tasks created one at a time are claimed by the first worker; the second sends no claim that finds nothing", async () => {
    const from = { first: claims(first).length, second: claims(second).length };
    for (let i = 0; i < 20; i++) expect(await sleepTask(0)).toMatchObject({ content: [{ type: "text", text: "slept 0 ms" }] });
    const secondClaims = claims(second).slice(from.second);
    // Each creation wakes the first worker alone. The second claims only if a task it heard of
    // was not seen ending within its standby (a very slow machine): never for each task.
    expect(secondClaims.length).toBeLessThanOrEqual(5);
    expect(claims(first).length - from.first).toBeGreaterThanOrEqual(20 - secondClaims.length);
    expect(claims(first).length - from.first + secondClaims.length).toBeLessThanOrEqual(30);
  });

  it("with the first worker killed but still listed as alive, a new task is run by the second within its standby", async () => {
    await first.kill("SIGKILL");
    const claimedFrom = second.stderr.items.filter((l) => l["msg"] === "claimed task").length;
    const started = Date.now();
    expect(await sleepTask(0)).toMatchObject({ content: [{ type: "text", text: "slept 0 ms" }] });
    const tookMs = Date.now() - started;
    // Far below the workers' safety re-check (5 s) and the lease (30 s) after which the dead
    // worker would drop out of the wake order.
    expect(tookMs).toBeLessThan(2500);
    expect(second.stderr.items.filter((l) => l["msg"] === "claimed task").length).toBe(claimedFrom + 1);
    expect(second.stderr.items.some(placed(0))).toBe(false);
  });
});
