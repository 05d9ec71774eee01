import type { ServerResponse } from "node:http";
import type { HttpRpcFailure } from "./rpc-http-errors.js";

/**
 * Writes a JSON-RPC error as a plain HTTP response (errors raised before any MCP session handles
 * the request), with the status {@link HttpRpcFailure} pairs with its code.
 */
export function sendRpcError(
  res: ServerResponse,
  failure: HttpRpcFailure,
  message: string,
  extra: { data?: unknown; headers?: Record<string, string> } = {},
): void {
  const error = { code: failure.code, message, ...(extra.data !== undefined && { data: extra.data }) };
  res.writeHead(failure.status, { "content-type": "application/json", ...extra.headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error }));
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
}
