import type { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { CancelledNotificationSchema, type RequestId } from "@modelcontextprotocol/sdk/types.js";

type AnyProtocol = Protocol<never, never, never>;

/**
 * Makes `notifications/cancelled` reach the handler of request id 0 too. The SDK (1.32) skips a
 * cancellation whose requestId is falsy, and a server's first request to its client has id 0 — so
 * an input request withdrawn by the server (its task was cancelled) would keep its prompt open.
 * This handler does what the SDK's does, without that check; it reads the SDK's map of running
 * handlers, which is private, hence this one place.
 */
export function cancelRequestIdZeroToo(protocol: { setNotificationHandler: AnyProtocol["setNotificationHandler"] }): void {
  protocol.setNotificationHandler(
    CancelledNotificationSchema as never,
    ((notification: { params: { requestId?: RequestId; reason?: string } }) => {
      const id = notification.params.requestId;
      if (id === undefined) return;
      const running = (protocol as unknown as { _requestHandlerAbortControllers?: Map<RequestId, AbortController> })
        ._requestHandlerAbortControllers;
      running?.get(id)?.abort(notification.params.reason);
    }) as never,
  );
}
