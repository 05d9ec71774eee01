/**
 * One raw JSON-RPC POST to the MCP endpoint and every JSON-RPC message that came back, whether the
 * server answered with a JSON body or an SSE stream: what the attack and fuzz suites compare.
 */
import type { WireMessage } from "./http-fixture.js";
import { eventData } from "./sse.js";

/** Both, as the SDK client sends it: the server picks JSON or SSE. */
export const ACCEPT_ANY = "application/json, text/event-stream";
/** JSON only: answered by the plain-JSON path, or refused (406) where a stream is required. */
export const ACCEPT_JSON = "application/json";

export interface RpcExchange {
  status: number;
  contentType: string | null;
  /** The body as received. */
  text: string;
  /** The JSON-RPC messages of the body: the JSON value (or batch), or the data of each SSE event. */
  messages: WireMessage[];
}

/**
 * POSTs `body` (a value to serialize, or raw text sent as is) and reads the whole answer; rejects
 * if none has fully arrived within `timeoutMs` (a hang is a finding, not something to wait out).
 */
export async function postRpc(
  url: URL | string,
  body: unknown,
  headers: Record<string, string>,
  options: { accept?: string; timeoutMs?: number } = {},
): Promise<RpcExchange> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: options.accept ?? ACCEPT_ANY, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  const text = await response.text();
  const contentType = response.headers.get("content-type");
  return {
    status: response.status,
    contentType,
    text,
    messages: contentType?.includes("text/event-stream") ? sseMessages(text) : jsonMessages(text),
  };
}

/** The answer to request `id` among an exchange's messages. */
export function answerTo(exchange: RpcExchange, id: string | number): WireMessage | undefined {
  return exchange.messages.find((m) => m.id === id && m.method === undefined);
}

function jsonMessages(text: string): WireMessage[] {
  if (text === "") return [];
  try {
    const value = JSON.parse(text) as unknown;
    return (Array.isArray(value) ? value : [value]) as WireMessage[];
  } catch {
    return [];
  }
}

function sseMessages(text: string): WireMessage[] {
  const messages: WireMessage[] = [];
  for (const event of text.replace(/\r\n?/g, "\n").split("\n\n")) {
    const data = eventData(event);
    if (data === "") continue;
    try {
      messages.push(JSON.parse(data) as WireMessage);
    } catch {
      // a malformed event is left out; the caller compares what it expected to find
    }
  }
  return messages;
}
