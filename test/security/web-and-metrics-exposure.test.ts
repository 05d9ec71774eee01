/**
 * Attack suite, the other HTTP surfaces (T-SEC-3): the web view's API with mallory's own MCP token
 * (never the admin token), and /metrics. Mallory must learn nothing of alice's tasks there either:
 * another owner's task is 404 exactly like an unknown id, lists, counts and the live event stream
 * hold only her own tasks, and the metrics carry no task id, owner or argument.
 */
import { afterEach, describe, expect, it } from "vitest";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { ALICE, MALLORY, startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { allIds, createVictimTasks, snapshot, unknownId, type VictimTasks } from "../support/victim-tasks.js";
import { openEventStream, webApi, type EventStreamReader } from "../support/web-client.js";

let env: TwoPrincipals | undefined;
let stream: EventStreamReader | undefined;
afterEach(async () => {
  stream?.close();
  stream = undefined;
  await env?.close();
  env = undefined;
});

async function setUp(): Promise<{ env: TwoPrincipals; victim: VictimTasks }> {
  env = await startTwoPrincipals();
  return { env, victim: await createVictimTasks(env.alice) };
}

/** Everything alice's tasks could be recognized by. */
const aliceMarks = (victim: VictimTasks): string[] => [
  ...allIds(victim),
  ALICE.owner,
  ALICE.principal,
  "the victim's secret question",
  "the victim's failure",
];

describe("the web view API with another principal's token (T-SEC-3)", () => {
  it("answers mallory's detail and cancel of each of alice's tasks with the very 404 of an unknown id, and the tasks are unchanged", async () => {
    const { env, victim } = await setUp();
    const before = await snapshot(env.alice.client, victim);
    const missing = unknownId();
    const unknownDetail = await webApi(env.fx.url, `/tasks/api/tasks/${missing}`, MALLORY.token);
    const unknownCancel = await webApi(env.fx.url, `/tasks/api/tasks/${missing}/cancel`, MALLORY.token, { method: "POST" });
    expect(unknownDetail.status).toBe(404);
    expect(unknownCancel.status).toBe(404);
    for (const id of allIds(victim)) {
      const detail = await webApi(env.fx.url, `/tasks/api/tasks/${id}`, MALLORY.token);
      const cancel = await webApi(env.fx.url, `/tasks/api/tasks/${id}/cancel`, MALLORY.token, { method: "POST" });
      expect([detail.status, detail.text]).toEqual([unknownDetail.status, unknownDetail.text]);
      expect([cancel.status, cancel.text]).toEqual([unknownCancel.status, unknownCancel.text]);
    }
    expect(await snapshot(env.alice.client, victim)).toEqual(before);
  });

  it("answers mallory's answer, re-run and bulk cancel of alice's tasks exactly as for an unknown id, and the tasks are unchanged", async () => {
    const { env, victim } = await setUp();
    const before = await snapshot(env.alice.client, victim);
    const post = (path: string, body: unknown) => webApi(env.fx.url, path, MALLORY.token, { method: "POST", body: JSON.stringify(body) });
    const answer = { action: "accept", content: { answer: "mallory's answer" } };
    const missing = unknownId();
    const unknownAnswer = await post(`/tasks/api/tasks/${missing}/inputs/some-input`, answer);
    const unknownRerun = await post(`/tasks/api/tasks/${missing}/rerun`, {});
    expect([unknownAnswer.status, unknownRerun.status]).toEqual([404, 404]);
    for (const id of allIds(victim)) {
      for (const pending of await env.fx.app.engine.store.pendingInputs(id)) {
        const direct = await post(`/tasks/api/tasks/${id}/inputs/${pending.id}`, answer);
        expect([direct.status, direct.text]).toEqual([unknownAnswer.status, unknownAnswer.text]);
      }
      const guessed = await post(`/tasks/api/tasks/${id}/inputs/some-input`, answer);
      expect([guessed.status, guessed.text]).toEqual([unknownAnswer.status, unknownAnswer.text]);
      const rerun = await post(`/tasks/api/tasks/${id}/rerun`, {});
      expect([rerun.status, rerun.text]).toEqual([unknownRerun.status, unknownRerun.text]);
      const bulk = await post("/tasks/api/cancel", { ids: [id, missing] });
      expect(bulk.json["results"]).toEqual([
        { id, error: { message: "Task not found" } },
        { id: missing, error: { message: "Task not found" } },
      ]);
    }
    expect(await snapshot(env.alice.client, victim)).toEqual(before);
    // Nothing was created in mallory's name from alice's tasks either.
    expect((await webApi(env.fx.url, "/tasks/api/tasks", MALLORY.token)).json["tasks"]).toEqual([]);
  });

  it("lists and counts only mallory's own tasks, whatever page cursor she crafts from alice's task", async () => {
    const { env, victim } = await setUp();
    const own = (await callToolAsTask(env.mallory.client, "sleep", { ms: 1 })).task.taskId;
    await taskResult(env.mallory.client, own);
    const crafted = Buffer.from(JSON.stringify([Date.now() + 60_000, victim.working])).toString("base64url");
    for (const query of [
      "",
      "?status=working,input_required,completed,failed,cancelled",
      `?after=${crafted}`,
      "?tool=sleep",
      "?tool=ask",
    ]) {
      const page = await webApi(env.fx.url, `/tasks/api/tasks${query}`, MALLORY.token);
      expect(page.status).toBe(200);
      for (const mark of aliceMarks(victim)) expect(page.text).not.toContain(mark);
      const ids = (page.json["tasks"] as { id: string }[]).map((t) => t.id);
      expect(ids.every((id) => id === own)).toBe(true);
      // The counts follow the filters: her one sleep task, or nothing for a tool she never called.
      const completed = query === "?tool=ask" ? 0 : 1;
      expect(page.json["counts"]).toEqual({ working: 0, input_required: 0, completed, failed: 0, cancelled: 0 });
    }
  });

  it("refuses mallory a filter on alice as owner: 403, naming nothing of alice's", async () => {
    const { env, victim } = await setUp();
    const filtered = await webApi(env.fx.url, `/tasks/api/tasks?owner=${encodeURIComponent(ALICE.owner)}`, MALLORY.token);
    expect(filtered.status).toBe(403);
    for (const id of allIds(victim)) expect(filtered.text).not.toContain(id);
  });

  it("never sends mallory's live event stream anything of alice's tasks as they progress, ask and end", async () => {
    const { env, victim } = await setUp();
    stream = await openEventStream(env.fx.url, MALLORY.token);
    // Alice's tasks move: progress, then a completion; mallory's own task gives the stream something to send.
    const progressing = (await callToolAsTask(env.alice.client, "sleep", { ms: 100, steps: 5 }, {}, { onprogress: () => {} })).task.taskId;
    await taskResult(env.alice.client, progressing);
    const own = (await callToolAsTask(env.mallory.client, "sleep", { ms: 1 })).task.taskId;
    await taskResult(env.mallory.client, own);
    await stream.events.waitFor(
      (e) => e.event === "task" && e.data["id"] === own && e.data["status"] === "completed",
      "mallory's own task on her stream",
    );
    for (const mark of [...aliceMarks(victim), progressing]) expect(stream.raw()).not.toContain(mark);
    expect((await getTask(env.alice.client, victim.working)).status).toBe("working");
  });
});

describe("/metrics (T-SEC-3)", () => {
  it("holds no task id, owner, principal or argument of anyone's tasks", async () => {
    const { env, victim } = await setUp();
    const own = (await callToolAsTask(env.mallory.client, "sleep", { ms: 1 })).task.taskId;
    await taskResult(env.mallory.client, own);
    const metrics = await fetch(new URL("/metrics", env.fx.url));
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain("mcp_tasks_created_total"); // there is something to look at
    for (const mark of [...aliceMarks(victim), own, MALLORY.owner, MALLORY.principal, ALICE.token, MALLORY.token])
      expect(text).not.toContain(mark);
  });
});
