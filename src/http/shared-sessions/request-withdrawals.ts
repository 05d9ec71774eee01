import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { EventBus } from "../../events/event-bus.js";
import { cancelledRequestIdOf, cancelReasonOf } from "../cancelled-request.js";
import { LazyAbort } from "../../core/lazy-abort.js";

/** The bus topic every node hears withdrawals on: a client's request id does not say which node serves it. */
const TOPIC = "withdrawals";

/** A request of a shared session being served on this node. */
export interface OpenRequest {
  readonly id: RequestId;
  /**
   * Aborted when the requestor withdraws the request (notifications/cancelled); a plain handler
   * also aborts it when the connection closes. Lazy: most requests are never withdrawn, and an
   * AbortSignal made for each was a measurable part of a front's CPU.
   */
  readonly abandoned: LazyAbort;
  /** Whether the requestor withdrew the request. */
  withdrawn(): boolean;
  /** Hands the withdrawal to the SDK server now serving the request (it then aborts its handler). */
  servedBy(deliver: (cancel: JSONRPCMessage) => void): void;
  /** The request's response has closed: later withdrawals of its id are not for it. */
  close(): void;
}

interface Entry {
  abandoned: LazyAbort;
  deliver: ((cancel: JSONRPCMessage) => void) | null;
  /** The withdrawal, once it came: given to a server that starts serving the request after it. */
  cancel: JSONRPCMessage | null;
}

/**
 * Carries a requestor's `notifications/cancelled` to the request it names. In a shared session
 * each POST is served on its own (by a plain handler or a fresh SDK server, on whichever node the
 * balancer picked), so the notification arrives where its request is unknown. Requests are
 * registered by session and id while their response is open; a withdrawal goes to the one here,
 * else to every node on the bus. It counts only within the session it was POSTed on: session ids
 * are signed and bound to their principal, and request ids are the client's own, so another
 * session naming the same id must not end this one's request (T-SEC-3).
 */
export class RequestWithdrawals {
  private readonly open = new Map<string, Map<RequestId, Entry>>();
  private readonly unsubscribe: () => void;

  constructor(private readonly bus: EventBus) {
    this.unsubscribe = bus.onTask(TOPIC, (event) => {
      if (event.type === "reply") this.withdrawHere(event.message, event.sessionId);
    });
  }

  close(): void {
    this.unsubscribe();
    this.open.clear();
  }

  /** Registers request `id` of session `sessionId` as served here until {@link OpenRequest.close}. */
  track(sessionId: string, id: RequestId): OpenRequest {
    let requests = this.open.get(sessionId);
    if (!requests) this.open.set(sessionId, (requests = new Map()));
    const entry: Entry = { abandoned: new LazyAbort(), deliver: null, cancel: null };
    // A client reusing an id while its earlier request is still open: the newer one is the one it means.
    requests.set(id, entry);
    return {
      id,
      abandoned: entry.abandoned,
      withdrawn: () => entry.cancel !== null,
      servedBy: (deliver) => {
        entry.deliver = deliver;
        if (entry.cancel) deliver(entry.cancel);
      },
      close: () => {
        const current = this.open.get(sessionId);
        if (current?.get(id) !== entry) return;
        current.delete(id);
        if (current.size === 0) this.open.delete(sessionId);
      },
    };
  }

  /**
   * Takes a `notifications/cancelled` POSTed on session `sessionId` to the request it names, here
   * or on another node; false for any other message (the caller handles it as usual).
   */
  route(message: unknown, sessionId: string): boolean {
    if (cancelledRequestIdOf(message) === undefined) return false;
    if (!this.withdrawHere(message, sessionId)) this.bus.publish({ type: "reply", taskId: TOPIC, message, sessionId });
    return true;
  }

  private withdrawHere(message: unknown, sessionId: string): boolean {
    const id = cancelledRequestIdOf(message);
    const entry = id === undefined ? undefined : this.open.get(sessionId)?.get(id);
    if (!entry || entry.cancel) return entry !== undefined;
    entry.cancel = message as JSONRPCMessage;
    entry.abandoned.abort(cancelReasonOf(message));
    entry.deliver?.(entry.cancel);
    return true;
  }
}
