/**
 * A waiting request whose requestor hangs up leaves nothing behind in the server: its wait stops
 * listening to the task, the waiting gauge drops, and the task runs on. One table of waiters, the
 * ones `npm run bench:waiters` measures: a 2025-11-25 `tasks/result` answered on a stream of its
 * own (src/http/request-streams.ts), one answered as plain JSON (its session's GET stream open),
 * and a 2026-07-28 `subscriptions/listen` following the task (TaskEngine.follow). Each is a raw
 * request on a connection of its own, ended by destroying the socket, as a client that dies does.
 */
import { request, type ClientRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpOptions } from "../../src/http/http-options.js";
import { countingBus, rawPost, rawRequest, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { scrape, valueOf } from "../support/prometheus.js";
import { envelope, statelessResult, V2026 } from "../support/stateless-client.js";

const V2025 = "2025-11-25";
const MINUTE_MS = 60_000;

let fx: HttpServerFixture | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await fx?.close();
  fx = undefined;
});

/** A 2025-11-25 session opened with raw requests (so no GET stream unless asked for). */
async function rawSession(url: URL): Promise<Record<string, string>> {
  const init = await rawPost(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: V2025, capabilities: {}, clientInfo: { name: "waiter-disconnect", version: "1.0.0" } },
  });
  const sessionId = init.headers.get("mcp-session-id");
  if (sessionId === null) throw new Error(`initialize answered ${init.status}: ${init.text}`);
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": V2025 };
  expect((await rawPost(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status).toBe(202);
  return headers;
}

/** Opens the session's standalone GET stream and keeps it open until the test ends. */
async function openGetStream(url: URL, headers: Record<string, string>): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal });
  expect(response.status).toBe(200);
  closers.push(() => controller.abort());
}

/** POSTs `body` on a connection of its own and leaves it open; resolves once the request is sent. */
function holdOpen(url: URL, body: object, headers: Record<string, string>): Promise<ClientRequest> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent: false,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(text),
          ...headers,
        },
      },
      (res) => res.resume(),
    );
    req.on("error", () => {});
    req.once("finish", () => resolve(req));
    req.once("error", reject);
    req.end(text);
  });
}

interface Waiter {
  name: string;
  /** Counted by mcp_tasks_results_waiting (a result request; a subscription is not one). */
  counted: boolean;
  /** The HTTP options of the server (resumable streams or not). */
  http?: HttpOptions;
  /** Creates a task that runs a minute, and starts a waiter on it. */
  start(fx: HttpServerFixture): Promise<{ taskId: string; waiter: ClientRequest; headers: Record<string, string> }>;
  /** Besides the connection's end, what ends the wait (a resumable stream waits for its client to come back). */
  after?: (fx: HttpServerFixture, headers: Record<string, string>) => Promise<void>;
}

/** A 2025-11-25 tasks/result on a raw session without its GET stream: the answer would come on the request's own stream. */
async function streamedResult({
  url,
}: HttpServerFixture): Promise<{ taskId: string; waiter: ClientRequest; headers: Record<string, string> }> {
  const headers = await rawSession(url);
  const taskId = await create2025(url, headers);
  const waiter = await holdOpen(url, { jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } }, headers);
  return { taskId, waiter, headers };
}

async function create2025(url: URL, headers: Record<string, string>): Promise<string> {
  const created = await rawPost(
    url,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "sleep", arguments: { ms: MINUTE_MS }, task: { ttl: 10 * MINUTE_MS } } },
    headers,
  );
  const taskId = /"taskId":"([^"]+)"/.exec(created.text)?.[1];
  if (taskId === undefined) throw new Error(`tools/call answered ${created.status}: ${created.text}`);
  return taskId;
}

const waiters: Waiter[] = [
  {
    name: "2025-11-25 tasks/result on a stream of its own (no GET stream, no resumable streams)",
    counted: true,
    http: { resumableStreams: false },
    start: streamedResult,
  },
  {
    // The client may come back with Last-Event-ID, so the wait outlives the connection; the session's end ends it.
    name: "2025-11-25 tasks/result on a resumable stream of its own, then its session deleted",
    counted: true,
    start: streamedResult,
    async after({ url }, headers) {
      expect((await rawRequest(url, "DELETE", headers)).status).toBe(200);
    },
  },
  {
    name: "2025-11-25 tasks/result answered as JSON (the session's GET stream open)",
    counted: true,
    async start({ url }) {
      const headers = await rawSession(url);
      await openGetStream(url, headers);
      const taskId = await create2025(url, headers);
      const waiter = await holdOpen(url, { jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } }, headers);
      return { taskId, waiter, headers };
    },
  },
  {
    name: "2026-07-28 subscriptions/listen following the task",
    counted: false,
    async start({ url }) {
      const created = await statelessResult(url, "tools/call", {
        name: "sleep",
        arguments: { ms: MINUTE_MS },
        task: { ttl: 10 * MINUTE_MS },
      });
      const taskId = String(created["taskId"]);
      const waiter = await holdOpen(
        url,
        { jsonrpc: "2.0", id: 2, method: "subscriptions/listen", params: { _meta: envelope(), notifications: { taskIds: [taskId] } } },
        { "mcp-protocol-version": V2026, "mcp-method": "subscriptions/listen" },
      );
      return { taskId, waiter, headers: {} };
    },
  },
];

describe("a waiting request whose requestor hangs up", () => {
  for (const { name, counted, http, start, after } of waiters) {
    it(`${name}: stops listening to the task and is no longer counted; the task runs on`, async () => {
      const counting = countingBus();
      fx = await startHttpServer({ app: { bus: counting.bus, inlineWaitMs: 0 }, ...(http && { http }) });
      const { taskId, waiter, headers } = await start(fx);
      // The run and the waiter each listen on the task.
      await counting.changes.waitFor((s) => s.byTask.get(taskId) === 2, "the waiter to wait on the task");
      if (counted) expect(valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(1);

      waiter.destroy();
      await after?.(fx, headers);
      await counting.changes.waitFor((s) => s.byTask.get(taskId) === 1, "the waiter to stop listening once its connection closed");
      await expect.poll(async () => valueOf(await scrape(fx!.url), "mcp_tasks_results_waiting"), { timeout: 3000 }).toBe(0);
      const task = await fx.app.engine.get(taskId, { owner: null });
      expect(task.status).toBe("working");
    });
  }
});
