import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/*
 * SDK objects recognised by shape, never by `instanceof`: an application may hold its own copy of
 * @modelcontextprotocol/sdk (another version, or one npm did not dedupe), whose classes are not
 * ours, and its Client must still be understood (its errors: isSdkError in core/errors.ts).
 */

/** An SDK `Client` (the side that knows its server's capabilities), from any copy of the SDK. */
export function isSdkClient(protocol: Client | Server): protocol is Client {
  return typeof (protocol as { getServerCapabilities?: unknown }).getServerCapabilities === "function";
}

/**
 * The SDK's base `Protocol.setRequestHandler` of `protocol`'s own copy of the SDK: the topmost
 * class in its prototype chain that defines the method (Client and Server override it with checks
 * of their own).
 */
export function baseSetRequestHandler(protocol: object): (...args: never[]) => unknown {
  let found: unknown;
  for (
    let proto: object | null = Object.getPrototypeOf(protocol) as object | null;
    proto !== null;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    if (Object.prototype.hasOwnProperty.call(proto, "setRequestHandler"))
      found = (proto as { setRequestHandler: unknown }).setRequestHandler;
  }
  if (typeof found !== "function") throw new TypeError("not an MCP SDK Client or Server: it has no setRequestHandler");
  return found as (...args: never[]) => unknown;
}
