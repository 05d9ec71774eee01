import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

/** Longest a close waits for notifications on their way. */
const GRACE_MS = 2_000;

/**
 * Lets the notifications already handed to the transport leave before it closes. The SDK sends
 * `notifications/cancelled` for a withdrawn request without waiting for it, and a Streamable HTTP
 * transport's close aborts the POSTs in flight: a requestor that withdraws a call and exits at
 * once (Ctrl-C) would otherwise never tell the server, whose handler runs on. Requests need no
 * such wait: nothing is owed for a request whose answer nobody awaits any more.
 */
export class NotificationsBeforeClose implements Transport {
  private readonly inFlight = new Set<Promise<void>>();
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
    this.inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const sent = this.inner.send(message, options);
    if ("method" in message && !("id" in message)) {
      this.inFlight.add(sent);
      void sent.then(
        () => this.inFlight.delete(sent),
        () => this.inFlight.delete(sent),
      );
    }
    return sent;
  }

  async close(): Promise<void> {
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, GRACE_MS)));
      await Promise.race([Promise.allSettled([...this.inFlight]), grace]);
      clearTimeout(timer);
    }
    await this.inner.close();
  }
}
