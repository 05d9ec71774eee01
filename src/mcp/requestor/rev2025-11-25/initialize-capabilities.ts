import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Hands `seen` the server's capabilities exactly as its `initialize` result sent them. The SDK's
 * schema keeps only the members of `capabilities.tools` it knows, so `getServerCapabilities()`
 * never shows `tools.idempotency` (SEP-3182), which decides whether a lost creation may be sent
 * again. Installed before `connect()`: the SDK sets the transport's `onmessage` there, and the
 * handler it sets is wrapped to read the initialize result on its way in.
 */
export function readInitializeCapabilities(client: Client, seen: (capabilities: Record<string, unknown>) => void): void {
  const connect = client.connect.bind(client);
  client.connect = (transport, options) => connect(observed(transport, seen), options);
}

function observed(transport: Transport, seen: (capabilities: Record<string, unknown>) => void): Transport {
  let read = false;
  return new Proxy(transport, {
    set(target, property, value: unknown) {
      if (property !== "onmessage" || typeof value !== "function") return Reflect.set(target, property, value);
      const inner = value as NonNullable<Transport["onmessage"]>;
      const wrapped: Transport["onmessage"] = (message, extra) => {
        if (!read) {
          const result = (message as { result?: unknown }).result;
          if (isObject(result) && typeof result["protocolVersion"] === "string" && isObject(result["capabilities"])) {
            read = true;
            seen(result["capabilities"]);
          }
        }
        inner(message, extra);
      };
      return Reflect.set(target, property, wrapped);
    },
  });
}
