/**
 * The one table from JSON-RPC error to HTTP status (src/http/rpc-http-errors.ts), against what
 * docs/errors.md and docs/limits.md document (and Streamable HTTP / RFC 6750 require).
 */
import { describe, expect, it } from "vitest";
import { RpcCode, TaskError, type TaskErrorKind } from "../../src/core/errors.js";
import { HttpFailure, httpStatusOf, httpStatusOfCode, httpStatusOfKind } from "../../src/http/rpc-http-errors.js";

describe("the endpoint's own refusals carry the documented code and status", () => {
  const documented: Record<keyof typeof HttpFailure, [code: number, status: number]> = {
    parseError: [-32700, 400],
    bodyTooLarge: [-32600, 413],
    noSession: [-32000, 400],
    invalidInitialize: [-32602, 400],
    unsupportedProtocolVersion: [-32000, 400],
    sessionNotFound: [-32001, 404],
    sessionIdMissing: [-32001, 400],
    unauthorized: [-32001, 401],
    forbidden: [-32001, 403],
    tooManySessions: [-32600, 503],
    tooManyClientSessions: [-32600, 429],
    verifierUnavailable: [-32603, 503],
    unavailable: [-32603, 503],
    routeNotFound: [-32601, 404],
    methodNotAllowed: [-32601, 405],
    internal: [-32603, 500],
    hostNotAllowed: [-32000, 403],
    originNotAllowed: [-32000, 403],
    invalidRequest: [-32600, 400],
    batch: [-32600, 400],
    unknownEventId: [-32000, 400],
  };

  it("lists exactly the documented refusals", () => {
    expect(Object.keys(HttpFailure).sort()).toEqual(Object.keys(documented).sort());
  });

  for (const [name, [code, status]] of Object.entries(documented)) {
    it(`${name}: HTTP ${status} with JSON-RPC ${code}`, () => {
      expect(HttpFailure[name as keyof typeof HttpFailure]).toEqual({ code, status });
    });
  }
});

describe("every named JSON-RPC code has its HTTP status", () => {
  const documented: Record<keyof typeof RpcCode, number> = {
    ParseError: 400,
    InvalidRequest: 400,
    MethodNotFound: 404,
    InvalidParams: 400,
    InternalError: 500,
    TaskCancelled: 409,
    RateLimited: 429,
    Unavailable: 503, // draining: another node can take it
    BadRequest: 400,
    ConnectionClosed: 400, // the same -32000 as BadRequest: on HTTP only the server's meaning exists
    SessionNotFound: 404,
    Unauthorized: 404, // -32001 alone says "session not found"; 401/403 come from HttpFailure
    RequestTimeout: 404,
    HeaderMismatch: 400, // X-HTTP-4
    MissingRequiredClientCapability: 400, // X-CAP-6
    ResourceNotFound: 400, // resources/read of an unknown URI (-32002)
  };

  for (const [name, status] of Object.entries(documented)) {
    it(`${name} (${RpcCode[name as keyof typeof RpcCode]}) → ${status}`, () => {
      expect(httpStatusOfCode(RpcCode[name as keyof typeof RpcCode])).toBe(status);
    });
  }

  it("a handler's own code, unknown to the table, is 500", () => {
    expect(httpStatusOfCode(-32042)).toBe(500);
    expect(httpStatusOfCode(7)).toBe(500);
  });
});

describe("a TaskError answers by kind, which says more than its code", () => {
  const documented: Record<TaskErrorKind, number> = {
    not_found: 404, // T-ERR-1, -32602 on the wire
    expired: 404, // T-ERR-7
    bad_cursor: 400, // T-ERR-2
    terminal: 409, // T-CANCEL-2
    invalid_params: 400,
    method_not_found: 404,
    cancelled: 409,
    internal: 500,
    rate_limited: 429, // T-SEC-4: the web view's cancel answers 429
    limit_exceeded: 429,
    unavailable: 503,
    protocol: 500,
  };

  for (const [kind, status] of Object.entries(documented)) {
    it(`${kind} → ${status}`, () => {
      expect(httpStatusOfKind(kind as TaskErrorKind)).toBe(status);
      if (kind !== "protocol") expect(httpStatusOf(new TaskError(kind as TaskErrorKind, "x"))).toBe(status);
    });
  }

  it("a protocol error goes by the code it carries", () => {
    expect(httpStatusOf(TaskError.protocol(RpcCode.InvalidParams, "bad"))).toBe(400);
    expect(httpStatusOf(TaskError.protocol(-32010, "a handler's own"))).toBe(500);
  });
});
