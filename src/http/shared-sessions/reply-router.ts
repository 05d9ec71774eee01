import { randomBytes } from "node:crypto";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { EventBus } from "../../events/event-bus.js";
import type { Logger } from "../../core/logger.js";

const PREFIX = "mcpr.";

interface Pending {
  originalId: RequestId;
  /** The session the request was sent to: only a response POSTed on it is its answer. */
  sessionId: string;
  deliver: (message: JSONRPCMessage) => void;
}

/**
 * Makes server→client requests answerable on any node. Without sticky sessions the client's
 * response to an elicitation or sampling request (or a tasks/get the server sends a client-hosted
 * task) is POSTed to whichever node the balancer picks. Outgoing requests therefore get ids that
 * name the node that sent them (`mcpr.<node>.<n>`); a node receiving a response for another node
 * forwards it on the event bus, and the sending node hands it to the SDK with the original id.
 * A response counts only on the session the request was sent to: ids are guessable (a node's id
 * shows in every request it sends, then a counter), and another principal's answer must never
 * reach a task's input request (T-SEC-3).
 */
export class ReplyRouter {
  readonly nodeId = randomBytes(6).toString("hex");
  private seq = 0;
  private readonly pending = new Map<string, Pending>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {
    this.unsubscribe = bus.onTask(`node:${this.nodeId}`, (event) => {
      if (event.type === "reply") this.resolveHere(event.message, event.sessionId);
    });
  }

  /** A transport of session `sessionId` whose outgoing requests carry routable ids. */
  wrap(inner: Transport, sessionId: string): Transport {
    return new RoutedTransport(inner, this, sessionId);
  }

  /**
   * Routes a JSON-RPC response whose id this cluster issued, POSTed on session `sessionId`; false
   * for any other message (the caller then handles it as usual). A response from another session
   * than the request's is dropped.
   */
  route(message: unknown, sessionId: string): boolean {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || !id.startsWith(PREFIX) || !isResponse(message)) return false;
    const node = id.slice(PREFIX.length).split(".")[0];
    if (!node) return false;
    if (node === this.nodeId) this.resolveHere(message, sessionId);
    else this.bus.publish({ type: "reply", taskId: `node:${node}`, message, sessionId });
    return true;
  }

  close(): void {
    this.unsubscribe();
    this.pending.clear();
  }

  /** @internal */
  register(originalId: RequestId, sessionId: string, deliver: (message: JSONRPCMessage) => void): string {
    const routed = `${PREFIX}${this.nodeId}.${(this.seq++).toString(36)}`;
    this.pending.set(routed, { originalId, sessionId, deliver });
    return routed;
  }

  /** @internal */
  forget(routed: string): void {
    this.pending.delete(routed);
  }

  private resolveHere(message: unknown, sessionId: string): void {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== "string") return;
    const pending = this.pending.get(id);
    if (!pending) {
      this.logger.debug({ id }, "response to a request no longer pending here; dropped");
      return;
    }
    if (pending.sessionId !== sessionId) {
      // Kept pending: the session that was asked may still answer.
      this.logger.warn({ id }, "response to a request of another session; dropped");
      return;
    }
    this.pending.delete(id);
    pending.deliver({ ...(message as object), id: pending.originalId } as JSONRPCMessage);
  }
}

function isResponse(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  const m = message as Record<string, unknown>;
  return m["jsonrpc"] === "2.0" && !("method" in m) && ("result" in m || "error" in m);
}

/** Rewrites outgoing request ids through a {@link ReplyRouter}; everything else passes through. */
class RoutedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Requests sent and not yet answered: the SDK's id → the routed id on the wire. */
  private readonly issued = new Map<RequestId, string>();

  constructor(
    private readonly inner: Transport,
    private readonly router: ReplyRouter,
    private readonly session: string,
  ) {
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      for (const routed of this.issued.values()) this.router.forget(routed);
      this.issued.clear();
      this.onclose?.();
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: RequestId; method?: string; params?: { requestId?: RequestId } };
    if (m.method !== undefined && m.id !== undefined) {
      const original = m.id;
      const routed = this.router.register(original, this.session, (response) => {
        this.issued.delete(original);
        this.onmessage?.(response);
      });
      this.issued.set(original, routed);
      return this.inner.send({ ...message, id: routed } as JSONRPCMessage, options);
    }
    // A withdrawn request is named by the id the client saw.
    const requestId = m.method === "notifications/cancelled" ? m.params?.requestId : undefined;
    const routed = requestId === undefined ? undefined : this.issued.get(requestId);
    if (requestId !== undefined && routed !== undefined) {
      this.issued.delete(requestId);
      this.router.forget(routed);
      return this.inner.send({ ...message, params: { ...m.params, requestId: routed } } as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }
}
