/**
 * One trace per task, end to end, with real processes and a real OTLP/HTTP endpoint: `mcp-tasks
 * serve` with the OpenTelemetry environment set exports through the SDK's own OTLP exporter
 * (protobuf or JSON) to a collector that decodes what it receives. A task created with a known
 * `_meta.traceparent` (SEP-414) has its creating span, its execution, its progress and question
 * events under that trace; the requests that poll, answer and fetch it are spans of their own,
 * linked to it; the question the task asks carries the task's trace in its `_meta`. Both eras,
 * from one table.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { SPAN_KIND, type ReceivedSpan } from "../support/otlp/received.js";
import { envelope, isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
});

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await receiver?.close();
});

/** A traceparent of a fresh trace, as an upstream caller would send it. */
function traceparent(): { traceId: string; parentId: string; header: string } {
  const traceId = randomBytes(16).toString("hex");
  const parentId = randomBytes(8).toString("hex");
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
}

let server: CliProcess;

async function serve(protocol: "http/protobuf" | "http/json", service: string): Promise<URL> {
  server = CliProcess.spawn(
    ["serve", "--tools", "test/support/user-tools.ts", "--store", "memory", "--port", "0", "--inline-wait-ms", "0"],
    {
      env: receiver.env(protocol, service),
    },
  );
  return new URL(await server.url());
}

interface Era {
  name: string;
  protocol: "http/protobuf" | "http/json";
  /**
   * Creates a `render` task with `_meta.traceparent`, answers its question, fetches its result;
   * returns the task id and the `_meta.traceparent` the question came with.
   */
  run(url: URL, header: string): Promise<{ taskId: string; questionTraceparent: unknown }>;
  /** The methods of the requests that read the task after its creation (each a span linked to its trace). */
  followUps: string[];
  /** Those of them sent under the caller's trace too, as a traced requestor sends its polls. */
  followUpsUnderCaller: string[];
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    protocol: "http/protobuf",
    followUps: ["tasks/get", "tasks/result"],
    followUpsUnderCaller: ["tasks/get", "tasks/result"],
    async run(url, header) {
      const client = new Client({ name: "trace-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
      let questionTraceparent: unknown;
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        questionTraceparent = request.params._meta?.["traceparent"];
        return { action: "accept", content: { answer: "4K" } };
      });
      await client.connect(new StreamableHTTPClientTransport(url));
      try {
        const created = await client.request(
          {
            method: "tools/call",
            params: { name: "render", arguments: { scene: "sky" }, task: { ttl: 60_000 }, _meta: { traceparent: header } },
          },
          CreateTaskResultSchema,
        );
        const taskId = created.task.taskId;
        await client.request(
          { method: "tasks/get", params: { taskId, _meta: { traceparent: header } } },
          CreateTaskResultSchema.shape.task,
        );
        const result = await client.request(
          { method: "tasks/result", params: { taskId, _meta: { traceparent: header } } },
          CallToolResultSchema,
        );
        expect(result.content).toEqual([{ type: "text", text: "rendered sky (4K)" }]);
        return { taskId, questionTraceparent };
      } finally {
        await client.close();
      }
    },
  },
  {
    name: "2026-07-28",
    protocol: "http/json",
    followUps: ["tasks/get", "tasks/update"],
    followUpsUnderCaller: ["tasks/update"],
    async run(url, header) {
      const meta = { ...envelope(), traceparent: header };
      const created = await statelessResult(url, "tools/call", { name: "render", arguments: { scene: "sky" } }, { meta });
      expect(created["resultType"]).toBe("task");
      const taskId = String(created["taskId"]);
      const parked = await pollTask(url, taskId, (t) => t["status"] === "input_required" || isTerminal(t));
      const questions = parked["inputRequests"] as Record<string, { params: { _meta?: Record<string, unknown> } }>;
      const [key] = Object.keys(questions);
      const questionTraceparent = questions[String(key)]?.params._meta?.["traceparent"];
      await statelessResult(
        url,
        "tasks/update",
        { taskId, inputResponses: { [String(key)]: { action: "accept", content: { answer: "4K" } } } },
        { meta: { ...envelope(), traceparent: header } },
      );
      const done = await pollTask(url, taskId, isTerminal);
      expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "rendered sky (4K)" }] } });
      return { taskId, questionTraceparent };
    },
  },
];

describe.each(ERAS)("a task's trace under $name ($protocol)", { timeout: 60_000 }, (era) => {
  it("the creating tools/call is the task's root under the caller's trace, its execution a child with progress and question events, and every later request a span linked to it; the creation's log line carries trace_id and span_id", async () => {
    const service = `trace-${era.name}`;
    const url = await serve(era.protocol, service);
    const { traceId, parentId, header } = traceparent();
    const { taskId } = await era.run(url, header);
    const ofService = (span: ReceivedSpan): boolean => span.resource["service.name"] === service;

    const root = await receiver.span((s) => ofService(s) && s.name === "tools/call render" && s.traceId === traceId, "the tools/call span");
    expect(root).toMatchObject({ parentSpanId: parentId, kind: SPAN_KIND.server, scope: "mcp-tasks" });
    expect(root.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "render",
      "gen_ai.operation.name": "execute_tool",
      "mcp.task.id": taskId,
      "mcp.protocol.version": era.name,
      "network.transport": "tcp",
    });
    expect(root.attributes["jsonrpc.request.id"]).toEqual(expect.any(String));
    expect(root.attributes["mcp.task.ttl_ms"]).toEqual(expect.any(Number));

    const execution = await receiver.span(
      (s) => ofService(s) && s.name === "execute_tool render" && s.attributes["mcp.task.id"] === taskId,
      "the execution span",
    );
    expect(execution).toMatchObject({ traceId, parentSpanId: root.spanId, kind: SPAN_KIND.internal });
    expect(execution.attributes).toMatchObject({ "gen_ai.tool.name": "render", "mcp.task.status": "completed" });
    const events = execution.events.map((e) => e.name);
    expect(events).toEqual(
      expect.arrayContaining(["mcp.task.progress", "mcp.task.input.requested", "mcp.task.input.answered", "mcp.task.status"]),
    );
    expect(execution.events.find((e) => e.name === "mcp.task.progress")?.attributes).toMatchObject({
      "mcp.task.progress": 1,
      "mcp.task.progress.total": 2,
      "mcp.task.progress.message": "loading",
    });
    expect(execution.events.find((e) => e.name === "mcp.task.input.requested")?.attributes).toMatchObject({
      "mcp.method.name": "elicitation/create",
    });

    for (const method of era.followUps) {
      const followUp = await receiver.span(
        (s) => ofService(s) && s.name === method && s.attributes["mcp.task.id"] === taskId,
        `the ${method} span`,
      );
      // Its own trace, linked to the task's: polls never pile up inside the task's trace, not
      // even those sent under the caller's own trace, which is then a link of its own.
      expect(followUp.traceId).not.toBe(traceId);
      expect(followUp.parentSpanId).toBeFalsy();
      expect(followUp.kind).toBe(SPAN_KIND.server);
      const links = [expect.objectContaining({ traceId, spanId: root.spanId, attributes: { "mcp.task.id": taskId } })];
      if (era.followUpsUnderCaller.includes(method)) links.push(expect.objectContaining({ traceId, spanId: parentId }));
      expect(followUp.links).toHaveLength(links.length);
      expect(followUp.links).toEqual(expect.arrayContaining(links));
      expect(followUp.attributes["mcp.task.status"]).toEqual(expect.any(String));
    }
    // The server's log lines about the request carry its trace and span: logs and traces join.
    const createdLine = await server.stderr.waitFor((l) => l["audit"] === "created" && l["taskId"] === taskId, "the created audit line");
    expect(createdLine).toMatchObject({ trace_id: traceId, span_id: root.spanId });
    expect(receiver.failures).toEqual([]);
    expect(receiver.requests.filter((r) => r.path === "/v1/traces").map((r) => r.contentType)).toContain(
      era.protocol === "http/json" ? "application/json" : "application/x-protobuf",
    );
  });

  it("the question the task puts to the requestor carries the task's trace in _meta.traceparent, its parent the execution span", async () => {
    const service = `question-${era.name}`;
    const url = await serve(era.protocol, service);
    const { traceId, header } = traceparent();
    const { taskId, questionTraceparent } = await era.run(url, header);
    const execution = await receiver.span(
      (s) => s.resource["service.name"] === service && s.name === "execute_tool render" && s.attributes["mcp.task.id"] === taskId,
      "the execution span",
    );
    expect(execution.traceId).toBe(traceId);
    expect(questionTraceparent).toBe(`00-${traceId}-${execution.spanId}-01`);
  });
});
