/**
 * The one normalizer from anything thrown to a JSON-RPC error (T-ERR-4: nothing internal leaks),
 * and the one place that strips the SDK's "MCP error <code>: " prefix.
 */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { RpcCode, TaskError, toRpcError, withoutSdkPrefix } from "../../src/core/errors.js";

/** What an McpError of another copy of the SDK looks like here: same name and fields, another class. */
class ForeignMcpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`MCP error ${code}: ${message}`);
    this.name = "McpError";
  }
}

describe("toRpcError", () => {
  it("names a full store (SQLITE_FULL) as -32603 with data.reason, not as a bare Internal error", () => {
    const error = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    expect(toRpcError(error)).toEqual({
      body: {
        code: RpcCode.InternalError,
        message: "The task store's disk is full: nothing was written; retry once space is freed",
        data: { reason: "store_full" },
      },
      known: false,
    });
  });

  it("names a read-only store (SQLITE_READONLY_*) as -32603 with data.reason", () => {
    const error = Object.assign(new Error("attempt to write a readonly database"), { code: "SQLITE_READONLY_DBMOVED" });
    expect(toRpcError(error).body).toMatchObject({ code: RpcCode.InternalError, data: { reason: "store_read_only" } });
  });

  it("answers an unreachable PostgreSQL (57P01 admin shutdown, mid-restart) with the retryable -32003", () => {
    const error = Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
    expect(toRpcError(error).body).toMatchObject({ code: RpcCode.Unavailable, data: { reason: "store_unreachable" } });
  });

  it("answers a busy store (SQLITE_BUSY) with the retryable -32003 and a retryAfterMs", () => {
    const error = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    expect(toRpcError(error).body).toMatchObject({ code: RpcCode.Unavailable, data: { reason: "store_busy", retryAfterMs: 1000 } });
  });

  it("keeps a TaskError's code, message and data", () => {
    const error = TaskError.rateLimited("task_operations", 100, 250);
    expect(toRpcError(error)).toEqual({ body: { code: RpcCode.RateLimited, message: error.message, data: error.data }, known: true });
  });

  it("keeps this SDK's McpError's code and data and drops its prefix", () => {
    expect(toRpcError(new McpError(-32010, "Rate limited", { retryAfterMs: 1200 }))).toEqual({
      body: { code: -32010, message: "Rate limited", data: { retryAfterMs: 1200 } },
      known: true,
    });
  });

  it("keeps an McpError of another copy of the SDK (no instanceof) and drops its prefix", () => {
    const foreign = new ForeignMcpError(-32001, "Upstream failed", { upstream: "b" });
    expect(foreign).not.toBeInstanceOf(McpError);
    expect(toRpcError(foreign)).toEqual({ body: { code: -32001, message: "Upstream failed", data: { upstream: "b" } }, known: true });
  });

  it("keeps a plain {code, message} object and drops a prefix in it", () => {
    expect(toRpcError({ code: -32602, message: "MCP error -32602: Unknown tool: x" })).toEqual({
      body: { code: -32602, message: "Unknown tool: x" },
      known: true,
    });
  });

  it("keeps a TaskError of another copy of this package (recognised by its kind)", () => {
    const foreign = Object.assign(new Error("Task not found"), { name: "RemoteError", kind: "protocol", code: -32602 });
    expect(toRpcError(foreign)).toEqual({ body: { code: -32602, message: "Task not found" }, known: true });
  });

  it("turns an Error that merely carries a numeric code (a gRPC status, an errno) into -32603 'Internal error'", () => {
    const grpc = Object.assign(new Error("14 UNAVAILABLE: connect ECONNREFUSED 10.0.0.7:50051"), { code: 14, details: "10.0.0.7" });
    expect(toRpcError(grpc)).toEqual({ body: { code: RpcCode.InternalError, message: "Internal error" }, known: false });
  });

  it("turns anything else into -32603 'Internal error' with nothing of it on the wire", () => {
    for (const thrown of [
      new Error("secret at /srv/app.ts:12"),
      new TypeError("x is undefined"),
      "a string",
      42,
      null,
      undefined,
      { message: "no code" },
      { code: 1.5, message: "not an integer" },
    ]) {
      const { body, known } = toRpcError(thrown);
      expect(known).toBe(false);
      expect(body).toEqual({ code: RpcCode.InternalError, message: "Internal error" });
    }
  });
});

describe("withoutSdkPrefix", () => {
  it("strips one 'MCP error <code>: ', negative or not, and leaves other messages alone", () => {
    expect(withoutSdkPrefix("MCP error -32602: Invalid cursor")).toBe("Invalid cursor");
    expect(withoutSdkPrefix("MCP error 5: five")).toBe("five");
    expect(withoutSdkPrefix("Invalid cursor (MCP error -32602: )")).toBe("Invalid cursor (MCP error -32602: )");
  });
});
