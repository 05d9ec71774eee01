/**
 * Who is calling: what a binding (an MCP session's handlers, the HTTP plain-JSON path, the web
 * view) knows of the requestor, handed to the engine with every task operation. The owner decides
 * what the caller may reach; the peer only feeds rate limits and the audit log (T-SEC-4, T-SEC-5).
 */
export interface Caller {
  /**
   * The owner key tasks are bound to: from the authorization context (T-SEC-1), or `session:…`
   * under session binding; null when bound to nobody (T-SEC-2).
   */
  owner: string | null;
  /**
   * The network peer: the HTTP remote address (the proxy's client address when a proxy is
   * trusted), "stdio" for stdio. Absent when the transport has no such notion (in-memory).
   */
  peer?: string;
  /**
   * Whose allowances the operation counts against when that is not the owner: an operator acting
   * for the owner (the web view's admin cancelling someone's task) spends its own, not theirs.
   */
  actingAs?: string;
}

/** A caller with no identity and no address: a library caller or a transport without either. */
export const ANONYMOUS_CALLER: Caller = { owner: null };

/**
 * The key a caller's allowances are counted under: its owner, or for a caller bound to nobody (or
 * only to its session) its address (every anonymous caller shares the null owner, so counting by
 * owner would let one of them starve all the others).
 */
export function allowanceKey(caller: Caller): string {
  if (caller.actingAs !== undefined) return `operator:${caller.actingAs}`;
  return caller.owner !== null && !SESSION_OWNER.test(caller.owner) ? `owner:${caller.owner}` : `anonymous:${networkOf(caller.peer)}`;
}

/**
 * The network a peer address is counted as: an IPv4 address (also IPv4-mapped IPv6) by itself, an
 * IPv6 address by its /64 — the block one subscriber gets, inside which a client may pick a new
 * address for every request, each of which would otherwise bring a fresh allowance.
 */
export function networkOf(peer: string | undefined): string {
  if (peer === undefined) return "-";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer);
  if (mapped) return mapped[1]!;
  if (!peer.includes(":")) return peer;
  const [head = "", tail] = peer.split("%")[0]!.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/**
 * The owner keys of session binding (src/mcp/owner.ts): a client mints one with every new
 * session, so counting by them would hand it a fresh allowance per session. An authenticated
 * owner (`iss|sub`) always holds a "|", which these never do.
 */
const SESSION_OWNER = /^session:[A-Za-z0-9_-]{22}$/;
