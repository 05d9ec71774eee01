/**
 * Raw 2026-07-28 requests (the tasks extension's wire) over real HTTP: one POST per request with
 * the `_meta` envelope and the SEP-2243 headers, the way a stateless client sends them. Each
 * option takes one part away or bends it, so a test can break exactly one thing.
 */
export const V2026 = "2026-07-28";
export const TASKS_EXT = "io.modelcontextprotocol/tasks";

export interface StatelessOptions {
  /** Declare the tasks extension in this request's clientCapabilities (default true). */
  declare?: boolean;
  /** Client capabilities besides the extension (default: elicitation and sampling). */
  capabilities?: Record<string, unknown>;
  /** Replaces the whole `_meta` (null: no `_meta` at all). */
  meta?: Record<string, unknown> | null;
  /** Header overrides by lower-case name; undefined removes the default. */
  headers?: Record<string, string | undefined>;
  token?: string;
  id?: number | string;
}

export interface StatelessResponse {
  status: number;
  headers: Headers;
  body: { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

let nextId = 1;

export function envelope(options: Pick<StatelessOptions, "declare" | "capabilities"> = {}): Record<string, unknown> {
  const capabilities = {
    ...(options.capabilities ?? { elicitation: {}, sampling: {} }),
    ...((options.declare ?? true) && { extensions: { [TASKS_EXT]: {} } }),
  };
  return {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientInfo": { name: "stateless-test", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": capabilities,
  };
}

/** The `Mcp-Name` a conformant client sends for this method (SEP-2243). */
function nameOf(method: string, params: Record<string, unknown>): string | undefined {
  const field =
    method === "tools/call"
      ? "name"
      : method.startsWith("tasks/") && method !== "tasks/list" && method !== "tasks/result"
        ? "taskId"
        : undefined;
  const value = field ? params[field] : undefined;
  return typeof value === "string" ? value : undefined;
}

export async function statelessRpc(
  url: URL | string,
  method: string,
  params: Record<string, unknown> = {},
  options: StatelessOptions = {},
): Promise<StatelessResponse> {
  const meta = options.meta === undefined ? envelope(options) : options.meta;
  const name = nameOf(method, params);
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": V2026,
    "mcp-method": method,
    ...(name !== undefined && { "mcp-name": name }),
    ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
    ...options.headers,
  };
  const sent = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const body = { jsonrpc: "2.0", id: options.id ?? nextId++, method, params: { ...params, ...(meta !== null && { _meta: meta }) } };
  const response = await fetch(url, { method: "POST", headers: sent, body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as StatelessResponse["body"] };
}

/** The result of a request that must succeed (HTTP 200, no error). */
export async function statelessResult(
  url: URL | string,
  method: string,
  params: Record<string, unknown> = {},
  options: StatelessOptions = {},
): Promise<Record<string, unknown>> {
  const { status, body } = await statelessRpc(url, method, params, options);
  if (status !== 200 || body.error || !body.result) throw new Error(`${method} failed: HTTP ${status} ${JSON.stringify(body)}`);
  return body.result;
}

/** Polls tasks/get until `done` holds (or fails after `timeoutMs`). */
export async function pollTask(
  url: URL | string,
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
  options: StatelessOptions = {},
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await statelessResult(url, "tasks/get", { taskId }, options);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never got there: last ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const isTerminal = (task: Record<string, unknown>): boolean => ["completed", "failed", "cancelled"].includes(String(task["status"]));
