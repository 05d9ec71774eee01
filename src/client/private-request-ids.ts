import { randomUUID } from "node:crypto";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

type Loose = { id?: unknown; method?: unknown; params?: Record<string, unknown> & { _meta?: Record<string, unknown> } };

/**
 * Makes this client's JSON-RPC request ids (and the progress tokens the SDK derives from them)
 * unique to this client: the SDK numbers requests 0, 1, 2, … in every process, so two requestors
 * on one MCP session (two CLI runs resuming the same stored session, a process after one that
 * was killed mid-request) send the same ids, and a Streamable HTTP server answers a request on
 * the stream of whichever request last used its id — one process then prints another's result,
 * or waits forever for an answer that went elsewhere.
 *
 * Outgoing ids and tokens become `<random>.<n>`; incoming responses and progress carrying this
 * client's prefix are handed to the SDK with the original number, and those without it (another
 * requestor's, on a shared session) are dropped rather than mistaken for ours. The server's own
 * requests and their ids are not touched.
 */
export class PrivateRequestIds implements Transport {
  private readonly prefix = `${randomUUID()}.`;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message, extra) => {
      const ours = this.incoming(message);
      if (ours) this.onmessage?.(ours, extra);
    };
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(this.outgoing(message), options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private mine(value: unknown): string {
    return `${this.prefix}${String(value)}`;
  }

  /** The original id or token, or undefined when it is not this client's. */
  private original(value: unknown): number | string | undefined {
    if (typeof value !== "string" || !value.startsWith(this.prefix)) return undefined;
    const rest = value.slice(this.prefix.length);
    // The SDK numbers its requests: give back the number it keys its handlers by.
    return /^\d+$/.test(rest) ? Number(rest) : rest;
  }

  private outgoing(message: JSONRPCMessage): JSONRPCMessage {
    const m = message as Loose;
    if (typeof m.method !== "string") return message; // a response to the server: its id is the server's
    const params = m.params;
    if (m.id !== undefined) {
      const token = params?._meta?.progressToken;
      const withToken = token === undefined ? params : { ...params, _meta: { ...params?._meta, progressToken: this.mine(token) } };
      return { ...message, id: this.mine(m.id), ...(withToken !== undefined && { params: withToken }) } as JSONRPCMessage;
    }
    if (m.method === "notifications/cancelled" && params?.["requestId"] !== undefined) {
      return { ...message, params: { ...params, requestId: this.mine(params["requestId"]) } } as JSONRPCMessage;
    }
    return message;
  }

  private incoming(message: JSONRPCMessage): JSONRPCMessage | null {
    const m = message as Loose;
    if (typeof m.method === "string") {
      if (m.method !== "notifications/progress") return message; // the server's requests and other notifications
      const token = this.original(m.params?.["progressToken"]);
      return token === undefined ? null : ({ ...message, params: { ...m.params, progressToken: token } } as JSONRPCMessage);
    }
    // An error without an id (the server could not read a request) belongs to nobody in particular.
    if (m.id === undefined || m.id === null) return message;
    const id = this.original(m.id);
    return id === undefined ? null : ({ ...message, id } as JSONRPCMessage);
  }
}
