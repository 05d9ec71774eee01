/** The envelope of one JSON-RPC 2.0 message of MCP: what is sound passes, what is not is named. */
import { describe, expect, it } from "vitest";
import { messageShapeProblem } from "../../src/mcp/json-rpc-message-shape.js";

describe("the JSON-RPC envelope of an MCP message", () => {
  it("passes a request, a notification, a result and an error response", () => {
    expect(messageShapeProblem({ jsonrpc: "2.0", id: 1, method: "ping" })).toBeNull();
    expect(messageShapeProblem({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x" } })).toBeNull();
    expect(messageShapeProblem({ jsonrpc: "2.0", method: "notifications/initialized" })).toBeNull();
    expect(messageShapeProblem({ jsonrpc: "2.0", id: 3, result: {} })).toBeNull();
    expect(messageShapeProblem({ jsonrpc: "2.0", id: 3, error: { code: -1, message: "no" } })).toBeNull();
  });

  it("refuses a response with both a result and an error, keeping its id", () => {
    expect(messageShapeProblem({ jsonrpc: "2.0", id: 3, result: {}, error: { code: -1, message: "no" } })).toEqual({
      message: 'Invalid Request: a response has a "result" or an "error", not both',
      id: 3,
    });
  });

  it("refuses a response without the id of the request it answers", () => {
    expect(messageShapeProblem({ jsonrpc: "2.0", result: {} })?.message).toBe(
      'Invalid Request: a response has the "id" of the request it answers',
    );
  });

  it("refuses params that are not an object on a notification, with id null", () => {
    expect(messageShapeProblem({ jsonrpc: "2.0", method: "notifications/cancelled", params: "x" })).toEqual({
      message: 'Invalid Request: "params" must be an object: MCP passes parameters by name',
      id: null,
    });
  });

  it("does not echo an id that is neither a string nor a number", () => {
    expect(messageShapeProblem({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" })).toEqual({
      message: 'Invalid Request: "id" must be a string or a number',
      id: null,
    });
  });
});
