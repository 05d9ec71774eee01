/**
 * What a requestor makes of an SDK rejection, when the SDK that raised it is another copy than
 * ours (a user's own install): recognised by name and fields, never by `instanceof`.
 */
import { describe, expect, it } from "vitest";
import { ConnectionError, fromSdkError, RemoteError } from "../../src/mcp/requestor/requestor-errors.js";

/** An McpError of another copy of the SDK: same name and fields, another class. */
function foreignMcpError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(`MCP error ${code}: ${message}`), { name: "McpError", code, data });
}

describe("fromSdkError with another copy of the SDK", () => {
  it("makes a JSON-RPC error answer a RemoteError with the receiver's code, words and data (T-RES-4)", () => {
    const error = fromSdkError(foreignMcpError(-32602, "Task not found", { taskId: "t1" }), "t1");
    expect(error).toBeInstanceOf(RemoteError);
    expect({ code: error.code, message: error.message, data: error.data, taskId: (error as RemoteError).taskId }).toEqual({
      code: -32602,
      message: "Task not found",
      data: { taskId: "t1" },
      taskId: "t1",
    });
  });

  it("makes the SDK's local 'Connection closed' a ConnectionError, not the receiver's answer", () => {
    const error = fromSdkError(foreignMcpError(-32000, "Connection closed"));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.code).toBe(-32000);
  });
});
