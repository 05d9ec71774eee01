/**
 * Both eras on one endpoint, one engine, one store: a 2025-11-25 session and stateless 2026-07-28
 * requests side by side, the same owner binding (X-SEC-2, T-SEC-1), and each era serving the
 * other's tasks (the decision in docs/protocol-eras.md).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { staticTokenVerifier } from "../../../src/http/bearer-auth.js";
import { connectHttpClient, type HttpClient } from "../../support/http-fixture.js";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { isTerminal, pollTask, statelessResult, statelessRpc } from "../../support/stateless-client.js";

const ALICE = "tok-alice-2026";
const BOB = "tok-bob-2026";

let server: TasksExtServer;
let session: HttpClient;
beforeAll(async () => {
  server = await startTasksExtServer({
    http: {
      verifier: staticTokenVerifier(
        new Map([
          [ALICE, "alice"],
          [BOB, "bob"],
        ]),
      ),
    },
  });
  session = await connectHttpClient(server.url, { token: ALICE });
});
afterAll(async () => {
  await session.close();
  await server.close();
});

describe("one endpoint, two eras", () => {
  it("still serves an initialize session (2025-11-25) beside stateless requests", async () => {
    const result = await session.client.callTool({ name: "greet", arguments: { name: "old" } }, CallToolResultSchema);
    expect(result.content).toEqual([{ type: "text", text: "Hello, old!" }]);
  });

  it("refuses a stateless request without a token like a session request (HTTP 401)", async () => {
    const { status } = await statelessRpc(server.url, "server/discover");
    expect(status).toBe(401);
  });
});

describe("owner binding is the same in both eras (X-SEC-2, T-SEC-1)", () => {
  it("answers another principal's 2026 task id with -32602, as for an unknown id", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} }, { token: ALICE });
    const foreign = await statelessRpc(server.url, "tasks/get", { taskId: created["taskId"] }, { token: BOB });
    const unknown = await statelessRpc(server.url, "tasks/get", { taskId: "no-such-task" }, { token: BOB });
    expect(foreign.body.error).toEqual(unknown.body.error);
    expect(foreign.body.error?.code).toBe(-32602);
  });

  it("binds a 2026 task to the same owner a 2025 session's task of that principal gets", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} }, { token: ALICE });
    const stateless = await server.app.engine.store.get(String(created["taskId"]), { any: true });
    const old = await session.client.request(
      { method: "tools/call", params: { name: "count_required", arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const sessionTask = await server.app.engine.store.get(old.task.taskId, { any: true });
    expect(stateless?.owner).toBe(sessionTask?.owner);
    expect(stateless?.owner).toBe("local|alice");
  });
});

describe("each era serves the other's tasks", () => {
  it("a 2025-11-25 session's tasks/get reads a task created by a 2026 request", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} }, { token: ALICE });
    await pollTask(server.url, String(created["taskId"]), isTerminal, { token: ALICE });
    const task = await session.client.experimental.tasks.getTask(String(created["taskId"]));
    expect(task.status).toBe("completed");
  });

  it("a 2026 tasks/get reads a task created by a 2025-11-25 session, with the 2026 shape", async () => {
    const old = await session.client.request(
      { method: "tools/call", params: { name: "count_required", arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const task = await pollTask(server.url, old.task.taskId, isTerminal, { token: ALICE });
    expect(task).toMatchObject({ resultType: "complete", status: "completed", result: { content: [{ type: "text", text: "counted" }] } });
    expect(task).not.toHaveProperty("ttl");
  });

  it("leaves the era unrecorded on a task a 2025-11-25 session created (absent means 2025-11-25)", async () => {
    const old = await session.client.request(
      { method: "tools/call", params: { name: "count_required", arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const stored = await server.app.engine.store.get(old.task.taskId, { any: true });
    expect(stored?.origin.era).toBeUndefined();
  });
});
