/**
 * Owner binding over real HTTP with bearer tokens (T-SEC-1, T-SEC-3): alice and bob are SDK
 * clients with their own tokens on one server.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, listTasks, taskResult } from "../support/conformance.js";
import { rawPost, rawRequest, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const tokens = new Map([
  ["tok-a", "alice"],
  ["tok-b", "bob"],
]);

function start(): Promise<HttpServerFixture> {
  return startHttpServer({ http: { verifier: staticTokenVerifier(tokens) } });
}

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

describe("bearer auth and owner binding over HTTP", () => {
  it("answers a request without a token, or with an unknown one, with HTTP 401 and WWW-Authenticate", async () => {
    fx = await start();
    const refusedHeaders: Record<string, string>[] = [
      {},
      { authorization: "Bearer tok-nobody" },
      { authorization: "Basic dG9rLWE6" },
      { authorization: "Bearer" },
    ];
    for (const headers of refusedHeaders) {
      const res = await rawPost(fx.url, initialize, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      expect(res.json).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringMatching(/unauthorized/i) } });
      // RFC 6750 §3.1: no credentials → a bare challenge; credentials that fail → error="invalid_token".
      if (headers["authorization"] === undefined) expect(res.headers.get("www-authenticate")).toBe("Bearer");
      else expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    }
    // GET and DELETE too, whatever session id they carry.
    expect((await rawRequest(fx.url, "GET", { accept: "text/event-stream" })).status).toBe(401);
    expect((await rawRequest(fx.url, "DELETE", { "mcp-session-id": "anything" })).status).toBe(401);

    // The SDK client without a token cannot even initialize.
    const refused = await fx.connect({ waitForGetStream: false }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    // With a valid token the same request goes through.
    const ok = await rawPost(fx.url, initialize, { authorization: "Bearer tok-a" });
    expect(ok.status).toBe(200);
  });

  it("hides alice's tasks from bob: get/result/cancel are -32602 'not found', tasks/list omits them, and alice's task is unharmed (T-SEC-3)", async () => {
    fx = await start();
    const alice = await fx.connect({ token: "tok-a" });
    const bob = await fx.connect({ token: "tok-b" });

    const running = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const finished = await callToolAsTask(alice.client, "sleep", { ms: 10 });
    expect((await taskResult(alice.client, finished.task.taskId)).content).toEqual([{ type: "text", text: "slept 10 ms" }]);
    const bobsOwn = await callToolAsTask(bob.client, "sleep", { ms: 10 });

    for (const taskId of [running.task.taskId, finished.task.taskId]) {
      await expectRpcError(getTask(bob.client, taskId), -32602, /not found/i);
      await expectRpcError(taskResult(bob.client, taskId), -32602, /not found/i);
      await expectRpcError(cancelTask(bob.client, taskId), -32602, /not found/i);
    }
    // Indistinguishable from an id that never existed.
    const missing = await expectRpcError(getTask(bob.client, "no-such-task"), -32602);
    const foreign = await expectRpcError(getTask(bob.client, running.task.taskId), -32602);
    expect(foreign.message).toBe(missing.message);

    const bobsList = (await listTasks(bob.client)).tasks.map((t) => t.taskId);
    expect(bobsList).toEqual([bobsOwn.task.taskId]);

    // Alice's tasks are untouched by bob's attempts.
    expect((await getTask(alice.client, running.task.taskId)).status).toBe("working");
    expect((await taskResult(alice.client, finished.task.taskId)).content).toEqual([{ type: "text", text: "slept 10 ms" }]);
    const alicesList = (await listTasks(alice.client)).tasks.map((t) => t.taskId);
    expect(alicesList.sort()).toEqual([running.task.taskId, finished.task.taskId].sort());
    // And they are hers to cancel.
    expect((await cancelTask(alice.client, running.task.taskId)).status).toBe("cancelled");
  });

  it("refuses alice's session id presented with bob's token (HTTP 404), for every method, and never serves it", async () => {
    fx = await start();
    const alice = await fx.connect({ token: "tok-a" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const taskId = created.task.taskId;
    const hijack = { ...alice.headers(), authorization: "Bearer tok-b" };

    const attempts = [
      await rawPost(fx.url, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId } }, hijack),
      await rawPost(fx.url, { jsonrpc: "2.0", id: 2, method: "tasks/cancel", params: { taskId } }, hijack),
      await rawPost(fx.url, { jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } }, hijack),
      await rawPost(fx.url, { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } }, hijack),
      await rawRequest(fx.url, "GET", { ...hijack, accept: "text/event-stream" }),
      await rawRequest(fx.url, "DELETE", hijack),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      expect(res.json?.result).toBeUndefined();
      expect(res.text).not.toContain(taskId);
    }
    // The same answer as for a session id that does not exist.
    const unknown = await rawPost(
      fx.url,
      { jsonrpc: "2.0", id: 5, method: "tasks/get", params: { taskId } },
      {
        ...hijack,
        "mcp-session-id": "00000000-0000-4000-8000-000000000000",
      },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe(attempts[0]?.text);

    // Alice's session survived bob's DELETE, and her task was neither cancelled nor touched.
    expect(fx.http.sessions.size).toBe(1);
    expect((await getTask(alice.client, taskId)).status).toBe("working");
    const own = await rawPost(fx.url, { jsonrpc: "2.0", id: 6, method: "tasks/get", params: { taskId } }, alice.headers());
    expect(own.status).toBe(200);
    expect(own.json?.result).toMatchObject({ taskId, status: "working" });
  });

  it("binds tasks to the principal, not the session: alice on a new session still has her task (T-SEC-1)", async () => {
    fx = await start();
    const first = await fx.connect({ token: "tok-a" });
    const created = await callToolAsTask(first.client, "sleep", { ms: 300 });
    const taskId = created.task.taskId;
    await first.transport.terminateSession();
    await first.close();

    const again = await fx.connect({ token: "tok-a" });
    expect(again.sessionId).not.toBe(first.sessionId);
    expect((await getTask(again.client, taskId)).taskId).toBe(taskId);
    expect((await listTasks(again.client)).tasks.map((t) => t.taskId)).toEqual([taskId]);
    expect((await taskResult(again.client, taskId)).content).toEqual([{ type: "text", text: "slept 300 ms" }]);

    // Bob, also on a fresh session, still cannot.
    const bob = await fx.connect({ token: "tok-b" });
    await expectRpcError(taskResult(bob.client, taskId), -32602, /not found/i);
    expect((await listTasks(bob.client)).tasks).toEqual([]);
  });
});
