/**
 * The example balancer configurations of docs/deploy/ (nginx, HAProxy), run as they are — only
 * the fronts' addresses, the port and nginx's log directory replaced — in front of a real cluster
 * (two `serve --workers 0` fronts, one worker, a fresh PostgreSQL schema), driven by the official
 * SDK client. What a balancer without sticky sessions must do (docs/deployment.md, "A balancer
 * without sticky sessions"): pass event streams event by event, keep a blocked tasks/result and the GET stream
 * open, pass the session's headers, and spread requests over the fronts.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BalancerProcess, exampleConfig, type BalancerKind } from "../support/balancer-process.js";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, relatedTaskId, type ConnectOptions, type HttpClient } from "../support/http-fixture.js";

let cluster: Cluster;
/** The fronts as the balancers reach them (they bind every address, so the requestor's Host header is accepted). */
let fronts: [string, string];
const clients: HttpClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({
    fronts: 2,
    workers: 1,
    concurrency: 8,
    logLevel: "info",
    frontArgs: ["--host", "0.0.0.0", "--trust-proxy"],
  });
  const [a, b] = cluster.urls.map((url) => `127.0.0.1:${new URL(url).port}`);
  fronts = [a as string, b as string];
}, 30_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await cluster?.stop();
});

const text = (value: string) => [{ type: "text", text: value }];

/** A duration of nginx (`1h`, `90s`, `500ms`) or HAProxy (same units; bare numbers are ms) in ms. */
function durationMs(value: string, bareUnitMs: number): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? ""] ?? bareUnitMs;
  return Number(match[1]) * unit;
}

/** The values of a directive (`name value;` in nginx, `name value` in HAProxy) outside comments. */
function directive(config: string, name: string): string[] {
  return config
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter((line) => line.startsWith(`${name} `))
    .map((line) => line.slice(name.length).trim().replace(/;$/, ""));
}

/**
 * POSTs one JSON-RPC message from the local address `from` (any 127/8 address is the loopback
 * interface on Linux), so the balancer sees a requestor address other than its own.
 */
function postFrom(
  from: string,
  url: string,
  message: object,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        localAddress: from,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        // An initialize may answer as an event stream that stays open: its first chunk is enough.
        const sse = res.headers["content-type"]?.includes("text/event-stream") === true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          if (sse && text.includes("\n\n")) res.destroy();
        });
        const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
        res.on("end", done);
        res.on("close", done);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(message));
  });
}

/** How long each example lets a silent response stream stay open, in ms. */
const READ_TIMEOUTS: Record<BalancerKind, () => number[]> = {
  nginx: () => directive(exampleConfig("nginx"), "proxy_read_timeout").map((v) => durationMs(v, 1_000)),
  haproxy: () =>
    ["timeout server", "timeout client"].flatMap((name) => directive(exampleConfig("haproxy"), name)).map((v) => durationMs(v, 1)),
};

describe.each<BalancerKind>(["nginx", "haproxy"])(
  "the example %s configuration in front of two cluster fronts",
  { timeout: 20_000 },
  (kind) => {
    let balancer: BalancerProcess;

    beforeAll(async () => {
      balancer = await BalancerProcess.start(kind, fronts);
    }, 15_000);

    afterAll(async () => {
      await balancer?.stop();
    });

    async function connect(options: ConnectOptions = {}): Promise<HttpClient> {
      const c = await connectHttpClient(balancer.url, options);
      clients.push(c);
      return c;
    }

    it("passes a tasks/result stream event by event: the task's progress arrives while the result is still pending", async () => {
      const creator = await connect();
      const { task } = await callToolAsTask(creator.client, "sleep", { ms: 1_500, steps: 3 }, {}, { onprogress: () => {} });
      // A second session of the same requestor has no GET stream subscription to the task's
      // progress token, so its only copy comes on its tasks/result stream (an SDK-served stream,
      // which sends no X-Accel-Buffering header: only the balancer's own setting keeps it unbuffered).
      const again = await connect();
      const result = taskResult(again.client, task.taskId).then((r) => ({ r, at: Date.now() }));
      const first = await again.received.waitFor(
        (m) => m.exchange.body?.method === "tasks/result" && m.message.method === "notifications/progress",
        "the first progress notification on the tasks/result stream",
      );
      const firstAt = Date.now();
      expect(first.message.params?.["progress"]).toBe(1);
      expect(relatedTaskId(first.message)).toBe(task.taskId);
      const { r, at } = await result;
      expect(r.content).toEqual(text("slept 1500 ms"));
      // Progress 1 is sent at 500 ms, the result at 1500 ms: a buffering balancer delivers both together.
      expect(at - firstAt).toBeGreaterThan(600);
    });

    it("carries a worker's elicitation on the tasks/result stream and the requestor's answer back (T-INPUT-2)", async () => {
      const c = await connect({ capabilities: { elicitation: { form: {} } } });
      c.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "forty-two" } }));
      const { task } = await callToolAsTask(c.client, "ask", { question: "The answer?" });
      const result = await taskResult(c.client, task.taskId);
      expect(result.content).toEqual(text("answer: forty-two"));
      const asked = c.received.filter((m) => m.message.method === "elicitation/create");
      expect(asked.map((m) => [m.exchange.body?.method, relatedTaskId(m.message)])).toEqual([["tasks/result", task.taskId]]);
      expect((await getTask(c.client, task.taskId)).status).toBe("completed");
      expect(c.errors).toEqual([]);
    });

    it("keeps a blocked tasks/result open until the task ends (5 s here), and the example allows an hour of silence", async () => {
      const c = await connect();
      const { task } = await callToolAsTask(c.client, "sleep", { ms: 5_000 });
      const started = Date.now();
      const result = await taskResult(c.client, task.taskId);
      expect(result.content).toEqual(text("slept 5000 ms"));
      expect(Date.now() - started).toBeGreaterThan(4_000);
      // A test cannot wait an hour: read the example's own timeouts instead.
      const timeouts = READ_TIMEOUTS[kind]();
      expect(timeouts.length).toBeGreaterThan(0);
      for (const timeout of timeouts) expect(timeout).toBeGreaterThanOrEqual(3_600_000);
    });

    it("keeps the session's GET stream open and passes its progress and status notifications", async () => {
      const c = await connect();
      const { task } = await callToolAsTask(c.client, "sleep", { ms: 300, steps: 2 }, {}, { onprogress: () => {} });
      const completed = await c.received.waitFor(
        (m) =>
          m.message.method === "notifications/tasks/status" &&
          m.message.params?.["taskId"] === task.taskId &&
          m.message.params?.["status"] === "completed",
        "the completed status on the GET stream",
      );
      expect(completed.exchange.method).toBe("GET");
      const progress = c.messagesOf("notifications/progress").filter((m) => relatedTaskId(m.message) === task.taskId);
      expect(progress.map((m) => [m.exchange.method, m.message.params?.["progress"]])).toEqual([
        ["GET", 1],
        ["GET", 2],
      ]);
      expect(c.errors).toEqual([]);
    });

    it("appends the requestor's address to X-Forwarded-For: a front started with --trust-proxy audits it, not the balancer's (T-SEC-4)", async () => {
      const requestor = "127.0.0.2";
      const init = await postFrom(requestor, balancer.url, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "xff", version: "0" } },
      });
      const sessionId = init.headers["mcp-session-id"];
      expect(init.status, init.text).toBe(200);
      expect(typeof sessionId).toBe("string");
      const session = { "mcp-session-id": sessionId as string, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
      expect((await postFrom(requestor, balancer.url, { jsonrpc: "2.0", method: "notifications/initialized" }, session)).status).toBe(202);
      const unknown = `no-such-task-${kind}`;
      const lookup = await postFrom(
        requestor,
        balancer.url,
        { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { taskId: unknown } },
        session,
      );
      expect(lookup.text).toContain("-32602");
      const denied = await Promise.any(
        cluster.fronts.map((front) =>
          front.stderr.waitFor((l) => l["audit"] === "lookup_denied" && l["taskId"] === unknown, "the front's audit line", 5_000),
        ),
      );
      expect(denied["peer"]).toBe(requestor);
    });

    it("sends the requests of one session to both fronts in turn", async () => {
      const before = balancer.requestLog().length;
      const c = await connect();
      const { task } = await callToolAsTask(c.client, "sleep", { ms: 0 });
      for (let i = 0; i < 4; i++) expect((await getTask(c.client, task.taskId)).taskId).toBe(task.taskId);
      const lines = (): string => balancer.requestLog().slice(before);
      // nginx logs the front's address, HAProxy the server's name.
      const names = kind === "nginx" ? fronts : ["mcp_tasks_fronts/front1", "mcp_tasks_fronts/front2"];
      const deadline = Date.now() + 3_000;
      while (!names.every((name) => lines().includes(name)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      for (const name of names) expect(lines()).toContain(name);
    });
  },
);
