import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The network peer of the HTTP request being served, for the code that answers it. The SDK's
 * transport hands handlers the request's headers but not its socket, and headers are the client's
 * to choose; so the HTTP layer runs each request inside {@link withRequestPeer} and the handlers
 * (`tasks/*`, the plain-JSON path, the web API) read the address it established.
 */
const peers = new AsyncLocalStorage<string>();

/** Runs `serve` with `peer` as the current request's peer (it follows every await inside). */
export function withRequestPeer<T>(peer: string, serve: () => T): T {
  return peers.run(peer, serve);
}

/** The current request's peer, or undefined outside an HTTP request (stdio, in-memory, timers). */
export function currentRequestPeer(): string | undefined {
  return peers.getStore();
}
