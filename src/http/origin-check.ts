import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { HttpFailureName } from "./rpc-http-errors.js";

/**
 * Who may talk to the server from a browser: the Origin check of Streamable HTTP (T-HTTP-1) and
 * the Host allow-list of a loopback bind, together the server's DNS-rebinding protection. Applied
 * to every request before any route, so `/mcp` (every era, every method), the web view, the
 * operations routes and a gateway's front are refused alike.
 *
 * - **Origin.** Absent: served (MCP clients are processes, which send none). Otherwise served
 *   only when it is a loopback origin (127.0.0.0/8, `localhost`, `[::1]`; any scheme and port),
 *   the origin of the address the server is bound to (`http://<address>:<port>`, for a bind to one
 *   address), or one of `allowedOrigins`. Anything else — `null` included — is HTTP 403.
 * - **Host**, on a loopback bind only: a loopback name with the server's port, else HTTP 403. A
 *   rebound name (`Host: rebind.evil.example:P`) never reaches a handler.
 *
 * Why "the server's own origin" is not read from the Host header: a DNS-rebound page *is* of
 * origin `http://<Host>` — its Origin and Host name the attacker's domain and agree — so that
 * comparison would serve exactly the requests it is meant to refuse, unless the Host were itself
 * checked. On a loopback bind it is, and there every Host allowed is a loopback name whose origin
 * is served anyway. On any other bind the names the server is reached by (a balancer's public
 * name, a container's published port) are unknown here, so its own origin is only the bound
 * address's, and a deployment names its public origins in `allowedOrigins`. Requests without an
 * Origin on such a bind are same-origin GETs at most (a browser sends Origin on every other
 * method), and no GET reads task data without a credential or a session id a POST created.
 */
export class OriginCheck {
  private readonly allowed: ReadonlySet<string>;
  private readonly loopbackBind: boolean;
  /** The bound address as an origin's host, for a bind to one address that is not loopback. */
  private readonly boundHost: string | undefined;
  /** Hosts already known to pass on a loopback bind (the common spellings), keyed with the port. */
  private readonly knownHosts = new Set<string>();
  private knownPort = -1;

  /**
   * @param bindHost the address the server listens on (`HttpOptions.host`)
   * @param port the port it listens on, known once listening
   * @param allowedOrigins more origins served, each checked by {@link originProblem} (else a TypeError)
   */
  constructor(
    bindHost: string,
    private readonly port: () => number,
    allowedOrigins: readonly string[] = [],
  ) {
    for (const origin of allowedOrigins) {
      const problem = originProblem(origin);
      if (problem !== undefined) throw new TypeError(problem);
    }
    this.allowed = new Set(allowedOrigins.map((origin) => new URL(origin).origin));
    this.loopbackBind = isLoopbackAddress(bindHost);
    const bound = parsed(`http://${isIP(bindHost) === 6 ? `[${bindHost}]` : bindHost}`)?.hostname;
    this.boundHost = this.loopbackBind || bound === "0.0.0.0" || bound === "[::]" ? undefined : bound;
  }

  /** Why the request is refused (the failure to answer with and its message), or undefined: it is served. */
  refusal(req: IncomingMessage): { failure: HttpFailureName; message: string } | undefined {
    if (this.loopbackBind) {
      const host = req.headers.host;
      if (host === undefined || !this.hostAllowed(host))
        return { failure: "hostNotAllowed", message: `Invalid Host header: ${host ?? "(none)"}` };
    }
    const origin = req.headers.origin;
    if (origin === undefined || this.originAllowed(origin)) return undefined;
    return { failure: "originNotAllowed", message: `Invalid Origin header: ${origin} is not allowed to use this server` };
  }

  private hostAllowed(host: string): boolean {
    const port = this.port();
    if (port !== this.knownPort) {
      this.knownPort = port;
      this.knownHosts.clear();
      for (const name of ["127.0.0.1", "localhost", "[::1]"]) this.knownHosts.add(`${name}:${port}`);
    }
    if (this.knownHosts.has(host)) return true;
    // Only the characters of a host name or address and a port: never a URL's user info or path.
    if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return false;
    const url = parsed(`http://${host}`);
    return url !== undefined && isLoopbackName(url.hostname) && Number(url.port || "80") === port;
  }

  private originAllowed(origin: string): boolean {
    const url = parsed(origin);
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) return false;
    if (this.allowed.has(url.origin) || isLoopbackName(url.hostname)) return true;
    return url.protocol === "http:" && url.hostname === this.boundHost && Number(url.port || "80") === this.port();
  }
}

/**
 * Checks one entry of `allowedOrigins` (`--allowed-origins`): an origin as a browser sends it,
 * `http(s)://host[:port]`, with no path, query or user info. Returns why it is refused, or undefined.
 */
export function originProblem(value: string): string | undefined {
  const url = parsed(value);
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
    return `an allowed origin is an http(s) origin such as https://tasks.example.com, not "${value}"`;
  if (/\s/.test(value) || url.username !== "" || url.password !== "" || url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    return `an allowed origin is scheme, host and port only (https://tasks.example.com:8443), not "${value}"`;
  }
  return undefined;
}

/** A bind address that reaches only this machine: 127.0.0.0/8, `::1`, `localhost`. */
export function isLoopbackAddress(address: string): boolean {
  if (address === "localhost" || address === "::1") return true;
  return isIP(address) === 4 && address.startsWith("127.");
}

/** A URL's hostname (IPv4 normalized, IPv6 in brackets) that names this machine. */
function isLoopbackName(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

function parsed(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
