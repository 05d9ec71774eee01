/** Raw Streamable HTTP exchanges for the resumable-stream tests: sessions, POST streams, resumptions. */
import { messageOf, openSse, type SseEvent, type SseStream } from "./sse-stream.js";

export const V = "2025-11-25";

/** A session opened with raw requests (no SDK client holding the GET stream): its headers. */
export async function rawSession(url: URL, capabilities: Record<string, unknown> = { elicitation: {} }): Promise<Record<string, string>> {
  const init = await post(
    url,
    {},
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: V, capabilities, clientInfo: { name: "raw", version: "0" } },
    },
  );
  await init.next((e) => messageOf(e)?.["id"] === 0);
  const sessionId = init.response.headers.get("mcp-session-id");
  if (!sessionId) throw new Error("no session id");
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": V };
  const ack = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  if (ack.status !== 202) throw new Error(`notifications/initialized: HTTP ${ack.status}`);
  return headers;
}

export function post(url: URL, headers: Record<string, string>, body: unknown): Promise<SseStream> {
  return openSse(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
}

export function resume(url: URL, headers: Record<string, string>, lastEventId: string): Promise<SseStream> {
  return openSse(url, { method: "GET", headers: { ...headers, accept: "text/event-stream", "last-event-id": lastEventId } });
}

export const callTool = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta && { _meta: meta }) },
});

export const isAnswerTo = (id: number) => (event: SseEvent) => {
  const message = messageOf(event);
  return message?.["id"] === id && message["method"] === undefined;
};
