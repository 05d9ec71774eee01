/**
 * Cluster mode in real processes: two `mcp-tasks serve --workers 0` front nodes and two
 * `mcp-tasks worker` processes on one fresh PostgreSQL schema, driven by the official SDK client
 * through a balancer without sticky sessions. Any request may land on either front; the handlers
 * run in the workers. Where a test must be sure a path crosses nodes, it routes those requests to
 * a chosen front (and the balancer's log says where every request went).
 */
import { CallToolResultSchema, ElicitRequestSchema, type ElicitRequest, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Balancer, byMethod, Cluster, rpcKind } from "../support/cluster.js";
import {
  callToolAsTask,
  cancelTask,
  deferred,
  expectRpcError,
  getTask,
  listAllTasks,
  RELATED_TASK,
  taskResult,
} from "../support/conformance.js";
import { connectHttpClient, relatedTaskId, type ConnectOptions, type HttpClient } from "../support/http-fixture.js";
import { Recorder } from "../support/recorder.js";

let cluster: Cluster;
const clients: HttpClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 2, concurrency: 4 });
}, 60_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await cluster?.stop();
});

async function connect(balancer: Balancer, options: ConnectOptions = {}): Promise<HttpClient> {
  const c = await connectHttpClient(balancer.url, { ...options, fetch: balancer.fetch });
  clients.push(c);
  return c;
}

const text = (value: string) => [{ type: "text", text: value }];

describe("cluster: any front node answers any task request", { timeout: 30_000 }, () => {
  it.each([
    [0, 1],
    [1, 0],
  ])("a task created through front %i is answered by front %i: tasks/get, tasks/result, tasks/list, tasks/cancel", async (a, b) => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": a, "tasks/get": b, "tasks/result": b, "tasks/list": b, "tasks/cancel": b });

    const done = (await callToolAsTask(c.client, "sleep", { ms: 200 })).task;
    expect(done.status).toBe("working");
    expect((await getTask(c.client, done.taskId)).taskId).toBe(done.taskId);
    const result = await taskResult(c.client, done.taskId);
    expect(result.content).toEqual(text("slept 200 ms"));
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: done.taskId });
    expect((await getTask(c.client, done.taskId)).status).toBe("completed");

    const long = (await callToolAsTask(c.client, "sleep", { ms: 60_000 })).task;
    const listed = await listAllTasks(c.client);
    expect(listed.map((t) => t.taskId)).toEqual(expect.arrayContaining([done.taskId, long.taskId]));
    expect(listed.find((t) => t.taskId === done.taskId)?.status).toBe("completed");

    const cancelled = await cancelTask(c.client, long.taskId);
    expect(cancelled.status).toBe("cancelled");
    // Read back through the creating node too: one store, one truth.
    balancer.route = byMethod({ "tasks/get": a, "tasks/result": a });
    expect((await getTask(c.client, long.taskId)).status).toBe("cancelled");
    await expectRpcError(taskResult(c.client, long.taskId), -32800, /cancelled/);

    // The balancer really sent them where the test says.
    const posts = balancer.where((r) => r.httpMethod === "POST");
    expect(posts.filter((r) => rpcKind(r) === "tools/call").map((r) => r.node)).toEqual([a, a]);
    const crossed = posts.filter((r) => ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"].includes(rpcKind(r) ?? ""));
    expect(crossed.slice(0, 5).map((r) => r.node)).toEqual([b, b, b, b, b]);
    expect(crossed.slice(-2).map((r) => r.node)).toEqual([a, a]);
    expect(c.errors).toEqual([]);
  });

  it("works through plain round robin: every request, the GET stream included, on whichever front comes next; the work spreads over both workers", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    // More concurrent work than one worker's 4 slots: the other worker must take some.
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => callToolAsTask(c.client, "sleep", { ms: 500 + i })));
    const ids = created.map((r) => r.task.taskId);
    const results = await Promise.all(ids.map((id) => taskResult(c.client, id)));
    expect(results.map((r) => r.content)).toEqual(ids.map((_, i) => text(`slept ${500 + i} ms`)));
    for (const id of ids) expect((await getTask(c.client, id)).status).toBe("completed");

    const nodesOf = (kind: string): Set<number> => new Set(balancer.where((r) => rpcKind(r) === kind).map((r) => r.node));
    expect(nodesOf("tools/call")).toEqual(new Set([0, 1]));
    expect(nodesOf("tasks/result")).toEqual(new Set([0, 1]));
    expect(nodesOf("tasks/get")).toEqual(new Set([0, 1]));
    const claimers = await Promise.all(ids.map((id) => cluster.claimer(id)));
    expect(new Set(claimers).size).toBe(2);
    expect(c.errors).toEqual([]);
  });
});

describe("cluster: input_required across nodes", { timeout: 30_000 }, () => {
  it("a worker's ctx.elicit reaches the requestor on front B's tasks/result stream; the answer, POSTed to front A, resumes the handler", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer, { capabilities: { elicitation: { form: {} } } });
    // Created via A, waited on via B, and the client's answer to B's question goes to A.
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, response: 0, "tasks/get": 0 });
    const asked = new Recorder<ElicitRequest>();
    c.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request);
      // While the question is out, every node sees the task waiting for input.
      const taskId = (request.params._meta?.[RELATED_TASK] as { taskId: string } | undefined)?.taskId ?? "";
      expect((await getTask(c.client, taskId)).status).toBe("input_required");
      return { action: "accept", content: { answer: "forty-two" } };
    });

    const { task } = await callToolAsTask(c.client, "ask", { question: "The answer?" });
    await cluster.claimer(task.taskId);
    const result = await taskResult(c.client, task.taskId);
    expect(result.content).toEqual(text("answer: forty-two"));
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });

    // The question came on the tasks/result stream held by front 1, tied to the task (T-INPUT-2).
    expect(asked.items).toHaveLength(1);
    expect(asked.items[0]?.params.message).toBe("The answer?");
    const question = c.received.filter((r) => r.message.method === "elicitation/create");
    expect(question).toHaveLength(1);
    expect(question[0]?.exchange.body?.method).toBe("tasks/result");
    expect(relatedTaskId(question[0]!.message)).toBe(task.taskId);
    // Its id names the node that asked, so any node can route the answer there.
    const questionId = question[0]?.message.id;
    expect(String(questionId)).toMatch(/^mcpr\./);

    // The answer really went to the other front (accepted there, 202) …
    // Logged once front 0's answer to it is in, which may come after the result on front 1's stream.
    await balancer.log.waitFor((r) => rpcKind(r) === "response" && r.body?.id === questionId, "front 0's answer to the client's answer");
    const answers = balancer.where((r) => rpcKind(r) === "response" && r.body?.id === questionId);
    expect(answers.map((r) => [r.node, r.status])).toEqual([[0, 202]]);
    expect(balancer.where((r) => rpcKind(r) === "tasks/result").map((r) => r.node)).toEqual([1]);
    // … and was recorded by the front that asked, then resumed the handler in a worker.
    const [front0, front1] = cluster.fronts;
    await front1!.stderr.waitFor((l) => l["audit"] === "input_answered" && l["taskId"] === task.taskId, "front 1 to record the answer");
    expect(front0!.stderr.filter((l) => l["audit"] === "input_answered" && l["taskId"] === task.taskId)).toEqual([]);
    // The run parks while the question is out; whichever worker claims the answered task resumes it.
    await cluster.completer(task.taskId);
    expect(c.errors).toEqual([]);
  });

  it("an answer far larger than a NOTIFY payload, POSTed to the other front, still reaches the front that asked (through the store)", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer, { capabilities: { elicitation: { form: {} } } });
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, response: 0, "tasks/get": 0 });
    const long = "forty-two ".repeat(5_000); // 50 kB: PostgreSQL refuses NOTIFY payloads over 8000 bytes
    c.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: long } }));
    const { task } = await callToolAsTask(c.client, "ask", { question: "The long answer?" });
    await cluster.claimer(task.taskId);
    const result = await taskResult(c.client, task.taskId);
    expect(result.content).toEqual(text(`answer: ${long}`));
    await balancer.log.waitFor((r) => rpcKind(r) === "response", "front 0's answer to the client's answer");
    expect(balancer.where((r) => rpcKind(r) === "response").map((r) => [r.node, r.status])).toEqual([[0, 202]]);
  });
});

describe("cluster: a requestor's notifications/cancelled reaches its request on another front", { timeout: 30_000 }, () => {
  it("a tasks/result withdrawn through front A while front B serves it ends on B: its question is withdrawn from the requestor, and the next tasks/result gets it (T-INPUT-5)", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer, { capabilities: { elicitation: { form: {} } } });
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "notifications/cancelled": 0, response: 0 });
    const asked = deferred<void>();
    const withdrawn = deferred<unknown>();
    let answer = false;
    c.client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      if (answer) return { action: "accept", content: { answer: "still here" } };
      extra.signal.addEventListener("abort", () => withdrawn.resolve(extra.signal.reason));
      asked.resolve();
      return new Promise<never>(() => {});
    });
    const { task } = await callToolAsTask(c.client, "ask", { question: "Still there?" });
    const giveUp = new AbortController();
    const abandoned = c.client.request({ method: "tasks/result", params: { taskId: task.taskId } }, CallToolResultSchema, {
      signal: giveUp.signal,
    });
    await asked.promise;
    giveUp.abort("no longer waiting");
    await abandoned.catch(() => {});

    // Front 1 heard of it from front 0, ended the request, and took back the question it had put on that stream.
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("the question was never withdrawn")), 5_000));
    await Promise.race([withdrawn.promise, timeout]);
    // Front 0's 202 and front 1's withdrawal reach this process on two connections, in either order.
    await balancer.log.waitFor((r) => rpcKind(r) === "notifications/cancelled", "front 0's answer to notifications/cancelled");
    expect(balancer.where((r) => rpcKind(r) === "notifications/cancelled").map((r) => [r.node, r.status])).toEqual([[0, 202]]);
    expect(balancer.where((r) => rpcKind(r) === "tasks/result").map((r) => r.node)).toEqual([1]);
    answer = true;
    expect((await taskResult(c.client, task.taskId)).content).toEqual(text("answer: still here"));
  });
});

describe("cluster: cancel reaches the worker", { timeout: 30_000 }, () => {
  it("tasks/cancel on a front aborts the handler's signal in the worker running it; the task stays cancelled", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/cancel": 1, "tasks/get": 0 });
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 60_000 });
    const worker = await cluster.claimer(task.taskId);

    const cancelled = await cancelTask(c.client, task.taskId);
    expect(cancelled.status).toBe("cancelled");
    const aborted = await worker.stderr.waitFor(
      (l) => l["msg"] === "handler ended after abort" && l["taskId"] === task.taskId,
      "the worker's handler to be aborted",
      5_000,
    );
    expect(aborted["reason"]).toBe("cancelled");

    // The handler has ended: nothing it did on its way out changed the task.
    const after = await getTask(c.client, task.taskId);
    expect(after.status).toBe("cancelled");
    expect(after.statusMessage).toBe("Cancelled by the requestor");
    await expectRpcError(taskResult(c.client, task.taskId), -32800, /cancelled/);
    expect(worker.stderr.filter((l) => l["taskId"] === task.taskId && (l["audit"] === "completed" || l["audit"] === "failed"))).toEqual([]);
  });
});

describe("cluster: notifications reach the requestor's open stream whichever front holds it", { timeout: 30_000 }, () => {
  it("progress of a worker's task reaches a reconnected session's tasks/result stream on the other front, before the result", async () => {
    const balancer = new Balancer(cluster.urls);
    const creator = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1 });
    const { task } = await callToolAsTask(creator.client, "sleep", { ms: 600, steps: 3 }, {}, { onprogress: () => {} });
    const token = balancer.where((r) => rpcKind(r) === "tools/call")[0]?.body?.params?.["_meta"] as { progressToken?: unknown } | undefined;
    expect(token?.progressToken).toBeDefined();

    // The same requestor on a new session (it reconnected): its tasks/result stream is the only one it has for the task.
    const again = await connect(balancer);
    const result = await taskResult(again.client, task.taskId);
    expect(result.content).toEqual(text("slept 600 ms"));
    const onResultStream = again.received.filter((r) => r.exchange.body?.method === "tasks/result");
    const progress = onResultStream.filter((r) => r.message.method === "notifications/progress");
    expect(progress.map((r) => r.message.params?.["progress"])).toEqual([1, 2, 3]);
    for (const { message } of progress) {
      expect(message.params?.["progressToken"]).toBe(token?.progressToken);
      expect(relatedTaskId(message)).toBe(task.taskId);
    }
    // The result is the last thing on that stream.
    expect(onResultStream[onResultStream.length - 1]?.message.result).toBeDefined();
    // The new session's SDK client never sent that token, so it reports each as unknown — and nothing else.
    for (const error of again.errors) expect(error.message).toMatch(/progress notification for an unknown token/);
  });

  it("the creating session gets each progress notification once, increasing, though it also waits on tasks/result (T-PROG-1)", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1 });
    const seen: number[] = [];
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 600, steps: 3 }, {}, { onprogress: (p) => seen.push(p.progress) });
    await taskResult(c.client, task.taskId);
    await c.received.waitFor(
      (r) => r.message.method === "notifications/progress" && r.message.params?.["progress"] === 3,
      "the last progress notification",
    );
    const progress = c.messagesOf("notifications/progress").filter((r) => relatedTaskId(r.message) === task.taskId);
    expect(progress.map((r) => [r.exchange.method, r.message.params?.["progress"]])).toEqual([
      ["GET", 1],
      ["GET", 2],
      ["GET", 3],
    ]);
    // What the SDK client hands on: in order, never twice. The last one may trail the result: it
    // rides the GET stream, which stores each event (for Last-Event-ID) before writing it, while the
    // result comes on the other front's tasks/result stream, and the client drops progress for a
    // task it has the result of. Two streams carry no order between them (transport spec).
    expect([
      [1, 2],
      [1, 2, 3],
    ]).toContainEqual(seen);
  });

  it.each([0, 1])(
    "progress and status changes arrive on the GET stream held by front %i, the task created through the other",
    async (holder) => {
      const balancer = new Balancer(cluster.urls);
      const other = 1 - holder;
      balancer.route = (r) => (r.httpMethod === "GET" ? holder : other);
      const c = await connect(balancer);
      expect(balancer.where((r) => r.httpMethod === "GET").map((r) => r.node)).toEqual([holder]);

      const seen = new Recorder<Progress>();
      const { task } = await callToolAsTask(c.client, "sleep", { ms: 300, steps: 2 }, {}, { onprogress: (p) => seen.push(p) });
      const completed = await c.received.waitFor(
        (r) =>
          r.message.method === "notifications/tasks/status" &&
          r.message.params?.["taskId"] === task.taskId &&
          r.message.params?.["status"] === "completed",
        "the completed status on the GET stream",
      );
      expect(completed.exchange.method).toBe("GET");
      const progress = c.messagesOf("notifications/progress").filter((r) => relatedTaskId(r.message) === task.taskId);
      expect(progress.map((r) => [r.exchange.method, r.message.params?.["progress"], r.message.params?.["total"]])).toEqual([
        ["GET", 1, 2],
        ["GET", 2, 2],
      ]);
      await seen.waitFor((p) => p.progress === 2, "the SDK's onprogress to see both steps");
      expect((await taskResult(c.client, task.taskId)).content).toEqual(text("slept 300 ms"));
      expect(c.errors).toEqual([]);
    },
  );
});
