/**
 * One trace per task across the processes of a cluster (real `serve --workers 0` fronts and a
 * real `worker` on PostgreSQL, each exporting through the SDK's OTLP exporter to a test
 * collector): the task's trace context travels in the store, so the worker's execution is a
 * child of the creating request on another process, the result fetched from the other front is
 * a span linked to that trace, and a re-run after a worker is SIGKILLed joins the same trace
 * with its attempt number.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { SPAN_KIND, type ReceivedSpan } from "../support/otlp/received.js";
import { envelope, isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";

/** Short leases, so a killed worker's task is re-queued within seconds. */
const LEASE_MS = 1500;

let receiver: OtlpReceiver;
let cluster: Cluster;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  cluster = await Cluster.start({
    fronts: 2,
    workers: 1,
    leaseMs: LEASE_MS,
    // A task call answers with the task at once, so its result is fetched later, elsewhere.
    frontArgs: ["--inline-wait-ms", "0"],
    env: (role, index) => receiver.env("http/protobuf", `cluster-${role}-${index}`),
  });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await receiver?.close();
});

function traceparent(): { traceId: string; parentId: string; header: string } {
  const traceId = randomBytes(16).toString("hex");
  const parentId = randomBytes(8).toString("hex");
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
}

const of =
  (service: string) =>
  (span: ReceivedSpan): boolean =>
    span.resource["service.name"] === service;

/** Creates a task of `tool` on a front under the caller's trace; returns its id. */
async function createOn(url: string, tool: string, args: Record<string, unknown>, header: string): Promise<string> {
  const created = await statelessResult(
    url,
    "tools/call",
    { name: tool, arguments: args },
    { meta: { ...envelope(), traceparent: header } },
  );
  expect(created["resultType"]).toBe("task");
  return String(created["taskId"]);
}

describe("a task's trace across a cluster", { timeout: 90_000 }, () => {
  it("created on front A, run on the worker, fetched from front B: one trace id across the three processes (B's fetch linked to it)", async () => {
    const [frontA = "", frontB = ""] = cluster.urls;
    const { traceId, parentId, header } = traceparent();
    const taskId = await createOn(frontA, "sleep", { ms: 200 }, header);
    const done = await pollTask(frontB, taskId, isTerminal);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "slept 200 ms" }] } });

    const root = await receiver.span(
      (s) => of("cluster-front-0")(s) && s.name === "tools/call sleep" && s.traceId === traceId,
      "front A's tools/call span",
    );
    expect(root).toMatchObject({ parentSpanId: parentId, kind: SPAN_KIND.server });
    expect(root.attributes["mcp.task.id"]).toBe(taskId);

    const execution = await receiver.span(
      (s) => of("cluster-worker-0")(s) && s.name === "execute_tool sleep" && s.attributes["mcp.task.id"] === taskId,
      "the worker's execution span",
    );
    expect(execution).toMatchObject({ traceId, parentSpanId: root.spanId, kind: SPAN_KIND.internal });
    expect(execution.attributes).toMatchObject({ "mcp.task.status": "completed", "mcp.task.attempt": 1 });

    const fetched = await receiver.span(
      (s) =>
        of("cluster-front-1")(s) &&
        s.name === "tasks/get" &&
        s.attributes["mcp.task.id"] === taskId &&
        s.attributes["mcp.task.status"] === "completed",
      "front B's tasks/get span that fetched the result",
    );
    // A poll is its own trace, linked to the task's: it leads to the same trace id.
    expect(fetched.traceId).not.toBe(traceId);
    expect(fetched.links).toEqual([expect.objectContaining({ traceId, spanId: root.spanId })]);
    expect(receiver.failures).toEqual([]);
  });

  it("a retryable task whose worker is SIGKILLed mid-run is re-run by another worker in the same trace, its execution span saying attempt 2", async () => {
    const [frontA = "", frontB = ""] = cluster.urls;
    const { traceId, header } = traceparent();
    const taskId = await createOn(frontA, "batch", { ms: 2000 }, header);
    const first = await cluster.claimer(taskId);
    cluster.workers.splice(cluster.workers.indexOf(first), 1);
    await first.kill("SIGKILL");
    // The replacement claims the task once a front's reaper sees the lease run out.
    const second = await cluster.startWorker();
    expect(await cluster.claimer(taskId, 15_000)).toBe(second);
    const done = await pollTask(frontB, taskId, isTerminal);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "slept 2000 ms" }] } });

    const root = await receiver.span(
      (s) => of("cluster-front-0")(s) && s.name === "tools/call batch" && s.traceId === traceId,
      "front A's tools/call span",
    );
    const rerun = await receiver.span(
      (s) => of("cluster-worker-1")(s) && s.name === "execute_tool batch" && s.attributes["mcp.task.id"] === taskId,
      "the re-run's execution span",
    );
    expect(rerun).toMatchObject({ traceId, parentSpanId: root.spanId });
    expect(rerun.attributes).toMatchObject({ "mcp.task.attempt": 2, "mcp.task.status": "completed" });
  });
});
