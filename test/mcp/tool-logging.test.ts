/**
 * `ctx.log` → `notifications/message` and `logging/setLevel` per session (MCP 2025-11-25
 * server/utilities/logging; levels in RFC 5424 order), on a plain call and on a task.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  EmptyResultSchema,
  ErrorCode,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { LOG_LEVELS } from "../../src/mcp/logging/log-level.js";
import type { TaskServer } from "../../src/mcp/task-server.js";
import { rpcError } from "../support/conformance.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** A tool that logs one message at each level, in order, then answers. */
function chattyTool(app: TaskServer): void {
  app.tool("chatty", { description: "Logs once at every level.", input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    for (const level of LOG_LEVELS) ctx.log(level, { said: level }, "chatty");
    return { content: [{ type: "text", text: "done" }] };
  });
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function logMessages(received: JSONRPCMessage[]): Array<Record<string, unknown>> {
  return received.flatMap((m) => ("method" in m && m.method === "notifications/message" ? [m.params as Record<string, unknown>] : []));
}

const callChatty = () => fx!.client.request({ method: "tools/call", params: { name: "chatty", arguments: {} } }, CallToolResultSchema);
const setLevel = (level: string) => fx!.client.request({ method: "logging/setLevel", params: { level } }, EmptyResultSchema);

describe("logging", () => {
  it("declares the logging capability", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    expect(fx.client.getServerCapabilities()?.logging).toEqual({});
  });

  it("sends a plain call's ctx.log as notifications/message with its level, logger and data", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    await callChatty();
    await fx.heard();
    expect(logMessages(fx.traffic().received)[0]).toEqual({ level: "debug", logger: "chatty", data: { said: "debug" } });
  });

  it("sends every level until the client sets one", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    await callChatty();
    await fx.heard();
    expect(logMessages(fx.traffic().received).map((p) => p["level"])).toEqual([...LOG_LEVELS]);
  });

  it("does not send messages below the level set with logging/setLevel", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    await setLevel("error");
    await callChatty();
    await fx.heard();
    expect(logMessages(fx.traffic().received).map((p) => p["level"])).toEqual(["error", "critical", "alert", "emergency"]);
  });

  it("keeps one session's level out of another session", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    await setLevel("emergency");
    const other = await fx.connectClient();
    await other.request({ method: "tools/call", params: { name: "chatty", arguments: {} } }, CallToolResultSchema);
    await fx.heard(other);
    expect(logMessages(fx.traffic(other).received)).toHaveLength(LOG_LEVELS.length);
  });

  it("answers logging/setLevel with an unknown level with -32602", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    expect((await rpcError(setLevel("verbose"))).code).toBe(ErrorCode.InvalidParams);
  });

  it("sends a task's log messages with the related-task _meta, at or above the session's level", async () => {
    fx = await inMemoryFixture({ setup: chattyTool });
    await setLevel("alert");
    const created = await fx.client.request(
      { method: "tools/call", params: { name: "chatty", arguments: {}, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await fx.client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema);
    await fx.heard();
    expect(logMessages(fx.traffic().received)).toEqual([
      { level: "alert", logger: "chatty", data: { said: "alert" }, _meta: { [RELATED_TASK]: { taskId } } },
      { level: "emergency", logger: "chatty", data: { said: "emergency" }, _meta: { [RELATED_TASK]: { taskId } } },
    ]);
  });
});
