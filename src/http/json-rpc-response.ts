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
  extra: {
    data?: unknown;
    headers?: Record<string, string>;
    /** The request's id, when it could be read. */ id?: string | number | null;
  } = {},
): void {
  const error = { code: failure.code, message, ...(extra.data !== undefined && { data: extra.data }) };
  res.writeHead(failure.status, { "content-type": "application/json", ...extra.headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", id: extra.id ?? null, error }));
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  // With its length known, the answer goes out as one write of head and body, not chunked. A
  // flat list of names and values is the head Node writes with the least work.
  const head = ["content-type", "application/json", "content-length", String(Buffer.byteLength(body))];
  for (const name of Object.keys(headers)) head.push(name, headers[name]!);
  res.writeHead(status, head);
  res.end(body);
}
