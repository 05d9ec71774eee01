import { randomBytes } from "node:crypto";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { EventBus } from "../../events/event-bus.js";
import type { Logger } from "../../runtime/logger.js";

const PREFIX = "mcpr.";

interface Pending {
  originalId: RequestId;
  deliver: (message: JSONRPCMessage) => void;
}

/**
 * Makes server→client requests answerable on any node. Without sticky sessions the client's
 * response to an elicitation or sampling request (or a tasks/get the server sends a client-hosted
 * task) is POSTed to whichever node the balancer picks. Outgoing requests therefore get ids that
 * name the node that sent them (`mcpr.<node>.<n>`); a node receiving a response for another node
 * forwards it on the event bus, and the sending node hands it to the SDK with the original id.
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
      if (event.type === "reply") this.resolveHere(event.message);
    });
  }

  /** A transport whose outgoing requests carry routable ids. */
  wrap(inner: Transport): Transport {
    return new RoutedTransport(inner, this);
  }

  /**
   * Routes a JSON-RPC response whose id this cluster issued; false for any other message (the
   * caller then handles it as usual).
   */
  route(message: unknown): boolean {
    const id = (message as { id?: unknown } | null)?.id;
    if (typeof id !== "string" || !id.startsWith(PREFIX) || !isResponse(message)) return false;
    const node = id.slice(PREFIX.length).split(".")[0];
    if (!node) return false;
    if (node === this.nodeId) this.resolveHere(message);
    else this.bus.publish({ type: "reply", taskId: `node:${node}`, message });
    return true;
  }

  close(): void {
    this.unsubscribe();
    this.pending.clear();
  }

  /** @internal */
  register(originalId: RequestId, deliver: (message: JSONRPCMessage) => void): string {
    const routed = `${PREFIX}${this.nodeId}.${(this.seq++).toString(36)}`;
    this.pending.set(routed, { originalId, deliver });
    return routed;
  }

  /** @internal */
  forget(routed: string): void {
    this.pending.delete(routed);
  }

  private resolveHere(message: unknown): void {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== "string") return;
    const pending = this.pending.get(id);
    if (!pending) {
      this.logger.debug({ id }, "response to a request no longer pending here; dropped");
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
  private readonly issued = new Set<string>();

  constructor(
    private readonly inner: Transport,
    private readonly router: ReplyRouter,
  ) {
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      for (const id of this.issued) this.router.forget(id);
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
    const m = message as { id?: RequestId; method?: string };
    if (m.method !== undefined && m.id !== undefined) {
      const routed = this.router.register(m.id, (response) => {
        this.issued.delete(routed);
        this.onmessage?.(response);
      });
      this.issued.add(routed);
      return this.inner.send({ ...message, id: routed } as JSONRPCMessage, options);
    }
    return this.inner.send(message, options);
  }
}
