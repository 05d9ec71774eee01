import type { IncomingMessage } from "node:http";

/**
 * How many proxies in front of the server append to `X-Forwarded-For` and are trusted to: false
 * or 0 (the default) ignores the header, since any client can send one; true means one.
 */
export type TrustProxy = boolean | number;

/**
 * The request's peer address, for rate limits and the audit log (T-SEC-4, T-SEC-5): the socket's
 * remote address, or behind `hops` trusted proxies the `X-Forwarded-For` entry the outermost of
 * them appended — entries further left came from the client and prove nothing.
 */
export function peerAddress(req: IncomingMessage, trustProxy: TrustProxy = false): string {
  const socketAddress = normalize(req.socket.remoteAddress ?? "unknown");
  const hops = trustProxy === true ? 1 : trustProxy === false ? 0 : Math.max(0, Math.floor(trustProxy));
  if (hops === 0) return socketAddress;
  const header = req.headers["x-forwarded-for"];
  const list = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const forwarded = list[list.length - hops];
  return forwarded === undefined ? socketAddress : normalize(forwarded);
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one peer; so are the same address with and without brackets. */
function normalize(address: string): string {
  // Capped: behind a proxy it is header text, and it becomes a key in the limiters' maps.
  const bare = address.slice(0, 64).replace(/^\[(.*)\]$/, "$1");
  return bare.startsWith("::ffff:") && bare.includes(".") ? bare.slice("::ffff:".length) : bare;
}
