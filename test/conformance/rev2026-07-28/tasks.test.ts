/**
 * The tasks extension (SEP-2663) on the engine and store: CreateTaskResult, tasks/get per status,
 * tasks/update, tasks/cancel, the capability gate and the removed legacy surface.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { isTerminal, pollTask, statelessResult, statelessRpc, TASKS_EXT } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  // The fallback for hosts without tasks off: this file checks the extension's own rules for a
  // non-declaring client (X-CAP-6); fallback.test.ts checks the fallback.
  server = await startTasksExtServer({ app: { backgroundAfterMs: null } });
});
afterAll(() => server.close());

async function createTask(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const created = await statelessResult(server.url, "tools/call", { name, arguments: args });
  expect(created["resultType"]).toBe("task");
  return created;
}

const parked = (task: Record<string, unknown>): boolean => task["status"] === "input_required" || isTerminal(task);

describe("CreateTaskResult (X-NEW)", () => {
  it("is flat, with resultType task and the Task fields at the top level (X-NEW-1, X-RT-2)", async () => {
    const created = await createTask("slow_compute", { seconds: 5, label: "flat" });
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: expect.any(Number), pollIntervalMs: expect.any(Number) });
    expect(created["taskId"]).toEqual(expect.any(String));
    for (const key of ["task", "result", "error", "inputRequests", "requestState"]) expect(created).not.toHaveProperty(key);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("is sent only once the task is in the store: a tasks/get right after it resolves (X-NEW-3)", async () => {
    const created = await createTask("count_required");
    const stored = await server.app.engine.store.get(String(created["taskId"]), { any: true });
    expect(stored?.id).toBe(created["taskId"]);
  });

  it("records the era that created the task in its origin", async () => {
    const created = await createTask("count_required");
    const stored = await server.app.engine.store.get(String(created["taskId"]), { any: true });
    expect(stored?.origin.era).toBe("2026-07-28");
  });

  it("ignores a legacy params.task: a forbidden tool still answers inline (X-LEG-2)", async () => {
    const result = await statelessResult(server.url, "tools/call", {
      name: "greet",
      arguments: { name: "legacy" },
      task: { ttl: 60_000, pollInterval: 100 },
    });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "Hello, legacy!" }] });
  });
});

describe("tasks/get (X-GET, X-TASK-8)", () => {
  it("shows a running task as working with resultType complete and ISO timestamps (X-GET-1, X-GET-2, X-CONF-12)", async () => {
    const created = await createTask("slow_compute", { seconds: 5, label: "working" });
    const task = await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] });
    expect(task).toMatchObject({ resultType: "complete", taskId: created["taskId"], status: "working" });
    expect(task["createdAt"]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    expect(task["lastUpdatedAt"]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    for (const key of ["result", "error", "inputRequests"]) expect(task).not.toHaveProperty(key);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("carries ttlMs and pollIntervalMs as positive integers and never ttl or pollInterval (X-TASK-1, X-CONF-3)", async () => {
    const created = await createTask("count_required");
    const task = await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] });
    expect(Number.isInteger(task["ttlMs"]) && (task["ttlMs"] as number) > 0).toBe(true);
    expect(Number.isInteger(task["pollIntervalMs"]) && (task["pollIntervalMs"] as number) > 0).toBe(true);
    expect(task).not.toHaveProperty("ttl");
    expect(task).not.toHaveProperty("pollInterval");
  });

  it("inlines the result of a completed task (X-GET-4)", async () => {
    const created = await createTask("count_required");
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "counted" }] } });
    expect(task).not.toHaveProperty("error");
  });

  it("shows a tool result with isError as completed with that result, not failed (X-TASK-5, X-GET-8)", async () => {
    const created = await createTask("failing_job");
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task["status"]).toBe("completed");
    expect(task["result"]).toMatchObject({ isError: true });
    expect(task).not.toHaveProperty("error");
  });

  it("shows a JSON-RPC error as failed with the error inline and a statusMessage, and no result (X-GET-6, X-GET-7, X-TASK-6)", async () => {
    const created = await createTask("protocol_error_job");
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "API rate limit exceeded" },
      statusMessage: expect.any(String),
    });
    expect(task).not.toHaveProperty("result");
  });

  it("leaves no related-task _meta on an inlined result and keeps the rest of its _meta (X-CONF-4)", async () => {
    const created = await createTask("related_meta");
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect((task["result"] as Record<string, unknown>)["_meta"]).toEqual({ "example.com/kept": 1 });
  });

  it("lists the outstanding questions of an input_required task by key, as {method, params} (X-GET-3, X-UPD-1)", async () => {
    const created = await createTask("confirm_delete", { filename: "a.txt" });
    const task = await pollTask(server.url, String(created["taskId"]), parked);
    expect(task["status"]).toBe("input_required");
    const requests = Object.values(task["inputRequests"] as Record<string, { method: string; params: Record<string, unknown> }>);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: "elicitation/create",
      params: { message: "Delete a.txt?", requestedSchema: { type: "object" } },
    });
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("answers an unknown taskId with -32602 (X-ERR-2)", async () => {
    const { body } = await statelessRpc(server.url, "tasks/get", { taskId: "no-such-task" });
    expect(body.error?.code).toBe(-32602);
  });
});

describe("tasks/update (X-UPD)", () => {
  it("acks with an empty resultType complete and lets the task complete with the answer (X-UPD-5, X-UPD-10, X-CONF-7)", async () => {
    const created = await createTask("confirm_delete", { filename: "b.txt" });
    const task = await pollTask(server.url, String(created["taskId"]), parked);
    const [key] = Object.keys(task["inputRequests"] as object);
    const ack = await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [String(key)]: { action: "accept", content: { confirm: true } } },
    });
    expect(ack).toEqual({ resultType: "complete" });
    const done = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Deleted b.txt" }] } });
  });

  it("after a partial update, the very next tasks/get is still input_required without the answered key (X-UPD-9, X-CONF-2)", async () => {
    const created = await createTask("multi_input");
    const task = await pollTask(
      server.url,
      String(created["taskId"]),
      (t) => isTerminal(t) || Object.keys((t["inputRequests"] as object | undefined) ?? {}).length === 2,
    );
    const [first, second] = Object.keys(task["inputRequests"] as object);
    // Each answer fits its own question's form (a field the form lacks is refused).
    const asksName = JSON.stringify((task["inputRequests"] as Record<string, unknown>)[String(first)]).includes('"name"');
    const content = asksName ? { name: "Ada" } : { confirm: true };
    await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [String(first)]: { action: "accept", content } },
    });
    const after = await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] });
    expect(after["status"]).toBe("input_required");
    expect(Object.keys(after["inputRequests"] as object)).toEqual([second]);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("ignores an unknown key: ack, and the question stays outstanding (X-UPD-8, X-CONF-11)", async () => {
    const created = await createTask("confirm_delete", { filename: "c.txt" });
    const before = await pollTask(server.url, String(created["taskId"]), parked);
    const ack = await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { "unknown-key": { ignored: true } },
    });
    expect(ack).toEqual({ resultType: "complete" });
    const after = await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] });
    expect(after["inputRequests"]).toEqual(before["inputRequests"]);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("ignores a key already answered: the first answer wins (X-UPD-3, X-UPD-8)", async () => {
    const created = await createTask("confirm_delete", { filename: "d.txt" });
    const task = await pollTask(server.url, String(created["taskId"]), parked);
    const key = String(Object.keys(task["inputRequests"] as object)[0]);
    await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [key]: { action: "accept", content: { confirm: false } } },
    });
    const ack = await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [key]: { action: "accept", content: { confirm: true } } },
    });
    expect(ack).toEqual({ resultType: "complete" });
    const done = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(done["result"]).toMatchObject({ content: [{ text: "Kept d.txt" }] });
  });

  it("refuses a malformed answer to an outstanding key with -32602 and records nothing (X-UPD-4)", async () => {
    const created = await createTask("confirm_delete", { filename: "e.txt" });
    const task = await pollTask(server.url, String(created["taskId"]), parked);
    const key = String(Object.keys(task["inputRequests"] as object)[0]);
    const { body } = await statelessRpc(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [key]: { action: "maybe" } },
    });
    expect(body.error?.code).toBe(-32602);
    const after = await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] });
    expect(Object.keys(after["inputRequests"] as object)).toEqual([key]);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("answers an unknown taskId with -32602 (X-UPD-7, X-ERR-2)", async () => {
    const { body } = await statelessRpc(server.url, "tasks/update", { taskId: "no-such-task", inputResponses: {} });
    expect(body.error?.code).toBe(-32602);
  });

  it("acks an update of a terminal task and changes nothing", async () => {
    const created = await createTask("count_required");
    const before = await pollTask(server.url, String(created["taskId"]), isTerminal);
    const ack = await statelessResult(server.url, "tasks/update", {
      taskId: created["taskId"],
      inputResponses: { any: { action: "accept" } },
    });
    expect(ack).toEqual({ resultType: "complete" });
    expect(await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] })).toEqual(before);
  });
});

describe("tasks/cancel (X-CANCEL)", () => {
  it("acks with only resultType complete, and the task settles to cancelled (X-CANCEL-2, X-GET-5, X-CONF-7)", async () => {
    const created = await createTask("slow_compute", { seconds: 60, label: "cancel" });
    const ack = await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
    expect(ack).toEqual({ resultType: "complete" });
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task["status"]).toBe("cancelled");
    for (const key of ["result", "error", "inputRequests"]) expect(task).not.toHaveProperty(key);
  });

  it("acks a cancel of a task already terminal the same way, without changing it (X-CONF-1)", async () => {
    const created = await createTask("count_required");
    const before = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] })).toEqual({ resultType: "complete" });
    expect((await statelessResult(server.url, "tasks/get", { taskId: created["taskId"] }))["status"]).toBe(before["status"]);
  });

  it("cancels a task parked in input_required (Appendix B confirm_delete)", async () => {
    const created = await createTask("confirm_delete", { filename: "f.txt" });
    await pollTask(server.url, String(created["taskId"]), parked);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
    expect((await pollTask(server.url, String(created["taskId"]), isTerminal))["status"]).toBe("cancelled");
  });

  it("answers an unknown taskId with -32602 (X-CANCEL-3, X-ERR-2)", async () => {
    const { body } = await statelessRpc(server.url, "tasks/cancel", { taskId: "no-such-task" });
    expect(body.error?.code).toBe(-32602);
  });
});

describe("the capability gate (X-CAP-5, X-CAP-6, X-ERR-4)", () => {
  it("refuses a required tool to a client that did not declare the extension with -32021, HTTP 400 and data.requiredCapabilities", async () => {
    const { status, body } = await statelessRpc(server.url, "tools/call", { name: "count_required", arguments: {} }, { declare: false });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS_EXT]: {} } } } });
  });

  it("runs no handler for a refused required tool", async () => {
    const before = server.runs.get("count_required") ?? 0;
    await statelessRpc(server.url, "tools/call", { name: "count_required", arguments: {} }, { declare: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.runs.get("count_required") ?? 0).toBe(before);
  });

  it("treats a client declaring only the legacy tasks capability as non-declaring (X-LEG-4)", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "count_required", arguments: {} },
      { declare: false, capabilities: { tasks: { requests: { tools: { call: {} } } } } },
    );
    expect(body.error?.code).toBe(-32021);
  });

  for (const [method, params] of [
    ["tasks/get", { taskId: "gate-test" }],
    ["tasks/update", { taskId: "gate-test", inputResponses: {} }],
    ["tasks/cancel", { taskId: "gate-test" }],
  ] as const) {
    it(`refuses ${method} from a non-declaring client with -32021 before looking the task up (X-CONF-6)`, async () => {
      const { status, body } = await statelessRpc(server.url, method, { ...params }, { declare: false });
      expect(status).toBe(400);
      expect(body.error?.code).toBe(-32021);
    });
  }

  it("gives a task to a request that declares the extension, whatever the client's earlier requests said (X-CONF-9)", async () => {
    await statelessResult(server.url, "tools/list", {}, { declare: false });
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} });
    expect(created["resultType"]).toBe("task");
  });
});
