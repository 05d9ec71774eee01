import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";

let fx: Fixture;
afterEach(async () => fx?.close());

describe("smoke", () => {
  it("runs sleep as a task and returns its result", async () => {
    fx = await inMemoryFixture();
    const created = await fx.client.request(
      { method: "tools/call", params: { name: "sleep", arguments: { ms: 20 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe("working");
    const result = await fx.client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
    expect(result.content[0]).toEqual({ type: "text", text: "slept 20 ms" });
    const got = await fx.client.request({ method: "tasks/get", params: { taskId: created.task.taskId } }, GetTaskResultSchema);
    expect(got.status).toBe("completed");
  });
});
