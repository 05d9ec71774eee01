import http from "node:http";
import https from "node:https";

/** Bounds of a {@link ConnectionPool}. */
export interface ConnectionPoolLimits {
  /** Destinations (checked address, port, TLS name) with an agent at once; the least recently used goes first. Default 32. */
  maxDestinations?: number;
  /** Idle connections kept per destination. Default 8. */
  maxIdlePerDestination?: number;
  /** An idle connection is closed after this long (sooner when the receiver's `Keep-Alive: timeout` says so). Default 4000 ms. */
  idleTimeoutMs?: number;
}

/**
 * Keep-alive connections for outbound requests, one agent per *checked* destination: the key is
 * the address the policy allowed (never the host name), the port, the scheme and the TLS server
 * name. A connection taken from an agent therefore always goes to an address that was checked for
 * this very request — when the name re-resolves to another address, that address is checked anew
 * and gets its own agent (or is refused), and the pooled connections to the old one are not used.
 * Bounded: few destinations, few idle connections each, closed soon when unused; an idle
 * connection does not keep the process alive.
 */
export class ConnectionPool {
  private readonly agents = new Map<string, http.Agent>();
  private readonly maxDestinations: number;
  private readonly maxIdle: number;
  private readonly idleTimeoutMs: number;

  constructor(limits: ConnectionPoolLimits = {}) {
    this.maxDestinations = limits.maxDestinations ?? 32;
    this.maxIdle = limits.maxIdlePerDestination ?? 8;
    this.idleTimeoutMs = limits.idleTimeoutMs ?? 4000;
  }

  /** The agent for connections to `address` (already checked), creating it (and evicting the oldest) as needed. */
  agentFor(protocol: "http:" | "https:", address: string, port: number, servername: string): http.Agent {
    const key = `${protocol}|${address}|${port}|${protocol === "https:" ? servername : ""}`;
    const known = this.agents.get(key);
    if (known !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.agents.delete(key);
      this.agents.set(key, known);
      return known;
    }
    const options = { keepAlive: true, maxFreeSockets: this.maxIdle, timeout: this.idleTimeoutMs, scheduling: "lifo" as const };
    const agent = protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    this.agents.set(key, agent);
    while (this.agents.size > this.maxDestinations) {
      const oldest = this.agents.keys().next().value as string;
      const evicted = this.agents.get(oldest);
      this.agents.delete(oldest);
      if (evicted !== undefined) retire(evicted);
    }
    return agent;
  }

  /** Closes the idle connections of `agent`: after one of them turned out closed by the receiver, the others likely are too. */
  dropIdle(agent: http.Agent): void {
    closeIdle(agent);
  }

  /** Closes the idle connections and forgets every destination; a request in flight finishes, then its connection closes. */
  close(): void {
    for (const agent of this.agents.values()) retire(agent);
    this.agents.clear();
  }
}

/** Idle connections close now; one in use finishes its request and is then closed, not kept. */
function retire(agent: http.Agent): void {
  // Read by the agent when a request ends: off, the connection is closed instead of kept.
  (agent as unknown as { keepAlive: boolean }).keepAlive = false;
  closeIdle(agent);
}

function closeIdle(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}
