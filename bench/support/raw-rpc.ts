/**
 * A low-overhead JSON-RPC client for the benches: node:http with a keep-alive Agent, bodies built
 * by string concatenation (no JSON.stringify per request), the response read once and parsed only
 * for the one field the bench needs. The SDK `Client` costs more per request than either server
 * under test (its transport, zod on every response, a Protocol per session), so measured through
 * it both servers look alike; this client leaves the servers' own cost in the figures.
 */
import { Agent, request } from "node:http";

export interface RawResponse {
  status: number;
  /** The `mcp-session-id` header, when the response carries one. */
  sessionId: string | undefined;
  /** The JSON-RPC response's text: the body, or the `data:` of the SSE event holding it. */
  text: string;
}

const JSON_AND_SSE = "application/json, text/event-stream";

/** One HTTP origin, its connections kept alive and reused (at most `maxSockets` at once). */
export class RawRpc {
  private readonly agent: Agent;
  private readonly url: URL;

  constructor(url: string, maxSockets: number) {
    this.url = new URL(url);
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** POSTs `body` (already JSON text) with `headers` besides content-type and accept. */
  post(body: string, headers: Record<string, string>): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.agent,
          host: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: "POST",
          headers: { "content-type": "application/json", accept: JSON_AND_SSE, "content-length": Buffer.byteLength(body), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            const raw = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
            const sse = res.headers["content-type"]?.startsWith("text/event-stream") ?? false;
            const session = res.headers["mcp-session-id"];
            resolve({
              status: res.statusCode ?? 0,
              sessionId: typeof session === "string" ? session : undefined,
              text: sse ? responseEventOf(raw) : raw,
            });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  /**
   * Opens the session's standalone stream (a GET the server holds open, as the SDK's client keeps
   * one per session) on a connection of its own, its events read and dropped. Resolves once the
   * server has answered with the stream; the returned function closes it.
   */
  openStandaloneStream(headers: Record<string, string>): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: false,
          host: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: "GET",
          headers: { accept: "text/event-stream", ...headers },
        },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`GET stream answered ${res.statusCode}`));
          res.on("data", () => {});
          res.on("error", () => {});
          resolve(() => req.destroy());
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The `data:` of the last SSE event that is a JSON-RPC response (has a result or an error). */
function responseEventOf(stream: string): string {
  let found = "";
  for (const line of stream.split("\n")) {
    if (line.startsWith("data: ") && (line.includes('"result"') || line.includes('"error"'))) found = line.slice(6);
  }
  return found;
}

/** A 2025-11-25 session opened over `rpc`: initialize, then notifications/initialized. Returns its id. */
export async function openSession(rpc: RawRpc, protocolVersion: string): Promise<string> {
  const init = await rpc.post(
    `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"${protocolVersion}","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`,
    {},
  );
  if (init.status !== 200 || init.sessionId === undefined)
    throw new Error(`initialize answered ${init.status}: ${init.text.slice(0, 200)}`);
  const headers = { "mcp-session-id": init.sessionId, "mcp-protocol-version": protocolVersion };
  const initialized = await rpc.post('{"jsonrpc":"2.0","method":"notifications/initialized"}', headers);
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return init.sessionId;
}

/** The `taskId` in a response's text, without parsing the rest ("" when there is none). */
export function taskIdIn(text: string): string {
  const at = text.indexOf('"taskId":"');
  if (at < 0) return "";
  const start = at + 10;
  return text.slice(start, text.indexOf('"', start));
}
