/**
 * The tasks extension (2026-07-28) on a real cluster: two `serve --workers 0` fronts and a worker
 * process on one PostgreSQL schema. Stateless requests carry no session, so any front answers any
 * of them: a task created on one front is read, answered and cancelled on the other, the work runs
 * on the worker, and the answer crosses nodes through the store and LISTEN/NOTIFY.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import { isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";

let cluster: Cluster;

beforeAll(async () => {
  // A generous inline wait: the inline answer below needs a worker in another process to claim and
  // finish the task in time, on two shared cores.
  cluster = await Cluster.start({ fronts: 2, workers: 1, concurrency: 4, frontArgs: ["--inline-wait-ms", String(INLINE_WAIT_MS)] });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

const INLINE_WAIT_MS = 3000;

const front = (i: number): string => String(cluster.urls[i]);

describe("cluster: the 2026-07-28 tasks extension on any front", { timeout: 30_000 }, () => {
  it("a task created on one front is found at once on the other, and its result is inlined there (X-NEW-3, X-GET-4)", async () => {
    const created = await statelessResult(front(0), "tools/call", { name: "sleep", arguments: { ms: INLINE_WAIT_MS + 1000 } });
    expect(created["resultType"]).toBe("task");
    const now = await statelessResult(front(1), "tasks/get", { taskId: created["taskId"] });
    expect(now["status"]).toBe("working");
    const done = await pollTask(front(1), String(created["taskId"]), isTerminal);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: `slept ${INLINE_WAIT_MS + 1000} ms` }] } });
  });

  it("an optional tool that a worker finishes within inlineWaitMs is answered inline by the front (woken across processes)", async () => {
    const result = await statelessResult(front(0), "tools/call", { name: "sleep", arguments: { ms: 200 } });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "slept 200 ms" }] });
  });

  it("inputRequests show on the other front, and a tasks/update there resumes the handler on the worker (X-UPD-10)", async () => {
    const created = await statelessResult(front(0), "tools/call", { name: "ask", arguments: { question: "Colour?" } });
    const parked = await pollTask(front(1), String(created["taskId"]), (t) => t["status"] === "input_required" || isTerminal(t));
    expect(parked["status"]).toBe("input_required");
    const [key] = Object.keys(parked["inputRequests"] as object);
    const ack = await statelessResult(front(1), "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [String(key)]: { action: "accept", content: { answer: "teal" } } },
    });
    expect(ack).toEqual({ resultType: "complete" });
    const done = await pollTask(front(0), String(created["taskId"]), isTerminal);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "answer: teal" }] } });
  });

  it("a tasks/cancel on the other front stops the work on the worker (X-CANCEL-2)", async () => {
    const created = await statelessResult(front(0), "tools/call", { name: "sleep", arguments: { ms: 60_000 } });
    await statelessResult(front(1), "tasks/cancel", { taskId: created["taskId"] });
    const done = await pollTask(front(0), String(created["taskId"]), isTerminal);
    expect(done["status"]).toBe("cancelled");
  });
});
