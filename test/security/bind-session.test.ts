/**
 * `bind: "session"` (`serve --bind session`): without authentication, tasks are bound to the MCP
 * session that created them (T-SEC-1's binding, with the session as the context; T-SEC-3's
 * answers): another session gets exactly "not found" and an empty list. The trade-off — no
 * reaching a task from a new session — is shown against the default binding.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { serveHttp } from "../../src/http/http-server.js";
import { createTaskServer } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, listAllTasks, taskResult } from "../support/conformance.js";
import { runCli } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("bind: session (no authentication)", () => {
  for (const sessions of ["local", "shared"] as const) {
    it(`T-SEC-3: another session gets -32602 'not found' on get/result/cancel and an empty tasks/list (${sessions} sessions)`, async () => {
      fx = await startHttpServer({ app: { bind: "session" }, http: { sessions } });
      const creator = await fx.connect();
      const other = await fx.connect();
      const running = (await callToolAsTask(creator.client, "sleep", { ms: 60_000 })).task.taskId;
      const done = (await callToolAsTask(creator.client, "sleep", { ms: 5 })).task.taskId;
      expect((await taskResult(creator.client, done)).content).toEqual([{ type: "text", text: "slept 5 ms" }]);

      for (const id of [running, done]) {
        await expectRpcError(getTask(other.client, id), -32602, "Failed to retrieve task: Task not found");
        await expectRpcError(taskResult(other.client, id), -32602, "Failed to retrieve task result: Task not found");
        await expectRpcError(cancelTask(other.client, id), -32602, "Failed to cancel task: Task not found");
      }
      expect(await listAllTasks(other.client)).toEqual([]);

      // The creating session still has both, untouched by the other's attempts.
      expect((await listAllTasks(creator.client)).map((t) => t.taskId).sort()).toEqual([running, done].sort());
      expect((await getTask(creator.client, running)).status).toBe("working");
      expect((await cancelTask(creator.client, running)).status).toBe("cancelled");
    });
  }

  it("stores a digest of the session id as the owner, never the session id itself", async () => {
    fx = await startHttpServer({ app: { bind: "session" } });
    const creator = await fx.connect();
    const { task } = await callToolAsTask(creator.client, "sleep", { ms: 60_000 });
    const owner = (await fx.app.engine.store.get(task.taskId, { any: true }))?.owner;
    expect(owner).toMatch(/^session:[A-Za-z0-9_-]{22}$/);
    expect(owner).not.toContain(creator.sessionId);
  });

  it("is the trade-off the default binding does not make: there a new session reaches the task by its id", async () => {
    fx = await startHttpServer();
    const creator = await fx.connect();
    const reconnected = await fx.connect();
    const { task } = await callToolAsTask(creator.client, "sleep", { ms: 5 });
    expect((await taskResult(reconnected.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 5 ms" }]);
  });

  it("is refused together with authentication, by serveHttp and by serve", async () => {
    const app = createTaskServer({ name: "t", version: "0", store: memoryStore(), bind: "session" });
    await expect(serveHttp(app, { port: 0, verifier: staticTokenVerifier(new Map([["t", "p"]])) })).rejects.toThrow(
      /bind.*session.*authentication/i,
    );
    await app.close();

    const refused = await runCli([
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--bind",
      "session",
      "--auth-tokens",
      "/nonexistent.json",
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--bind session.*--auth-tokens|--auth-tokens.*--bind session/);
  });
});
