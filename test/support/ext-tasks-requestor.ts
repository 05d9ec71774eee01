/**
 * The official tasks-extension requestor (@modelcontextprotocol/ext-tasks on
 * @modelcontextprotocol/client 2.x) connected to one of our servers under 2026-07-28.
 *
 * The package leaves the wire of `tools/call` and `tasks/*` to the host ("rawDispatch"): the SDK
 * client's codecs reject the extension's shapes. This host posts each request as one stateless
 * JSON-RPC POST with the SEP-2243 routing headers our endpoint requires (X-HTTP-1, X-HTTP-2).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type ApplicationInputHandler,
  type JsonRpcResponse,
  type RawClientDispatch,
  type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";

export const MODERN = "2026-07-28";
const CLIENT_INFO = { name: "ext-tasks-requestor-test", version: "0.0.0" };

/** The body field `Mcp-Name` mirrors (X-HTTP-2). */
function nameOf(method: string, params: Record<string, unknown> | undefined): string | undefined {
  const value = method === "tools/call" ? params?.["name"] : method.startsWith("tasks/") ? params?.["taskId"] : undefined;
  return typeof value === "string" ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One request, one POST, one JSON answer (what our stateless endpoint sends for these methods). */
export function httpDispatch(url: URL): RawClientDispatch {
  let nextId = 0;
  return async (request, options) => {
    if (!isRecord(request) || typeof request["method"] !== "string") throw new TypeError("not a JSON-RPC request");
    const method = request["method"];
    const params = isRecord(request["params"]) ? request["params"] : undefined;
    const name = nameOf(method, params);
    const headers = new Headers({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN,
      "mcp-method": method,
      ...(name !== undefined && { "mcp-name": name }),
    });
    // The package sends `Mcp-Name` itself on task follow-ups; `set` keeps one value per name.
    for (const [key, value] of Object.entries(options?.context?.headers ?? {})) headers.set(key, value);
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: ++nextId, ...request }),
      ...(options?.signal && { signal: options.signal }),
    });
    const message: unknown = await response.json();
    if (!isRecord(message)) throw new Error(`HTTP ${response.status}: not a JSON-RPC message`);
    if (isRecord(message["error"])) return { kind: "error", error: message["error"] } as JsonRpcResponse;
    return { kind: "result", result: message["result"] } as JsonRpcResponse;
  };
}

export interface Requestor {
  client: Client;
  session: TaskEnabledSession;
  close(): Promise<void>;
}

/**
 * An SDK v2 client pinned to 2026-07-28 (connect = `server/discover`) and a task session on it.
 * `endpointId` scopes serialized task references: the same id on a later connection resumes them.
 */
export async function connectRequestor(
  url: URL,
  options: { endpointId: string; onInputRequest?: ApplicationInputHandler["handle"] },
): Promise<Requestor> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: { elicitation: {} } });
  await client.connect(new StreamableHTTPClientTransport(url));
  const session = createTaskSessionFromClient(client, {
    endpointId: options.endpointId,
    rawDispatch: httpDispatch(url),
    v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: { elicitation: {} } },
    ...(options.onInputRequest && { onInputRequest: options.onInputRequest }),
  });
  return {
    client,
    session,
    async close() {
      await session.close();
      await client.close();
    },
  };
}
