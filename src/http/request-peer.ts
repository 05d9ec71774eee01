import type { IncomingMessage } from "node:http";

/**
 * The network peer of each HTTP request being served (its address, or the trusted proxy's
 * client address), set once by the server when the request arrives and read by whatever answers
 * it: the plain-JSON and stateless paths, the session endpoints, the web view's actions.
 *
 * Kept beside the request rather than in an AsyncLocalStorage: on Node 20 and 22 one storage
 * entered per request switches on promise hooks for the whole process, and every promise of every
 * request then pays for them (measured: a fifth of a creation's CPU, an eighth of a `tasks/get`'s).
 */
const peers = new WeakMap<IncomingMessage, string>();

/** Records `req`'s peer; the HTTP server calls it once per request, before anything reads it. */
export function rememberPeer(req: IncomingMessage, peer: string): void {
  peers.set(req, peer);
}

/** The peer recorded for `req`, or undefined for a request the server did not see arrive. */
export function peerOf(req: IncomingMessage): string | undefined {
  return peers.get(req);
}
