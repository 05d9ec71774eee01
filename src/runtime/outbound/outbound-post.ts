import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { AddressPolicy } from "./address-policy.js";
import { plainAddress } from "./address-policy.js";
import type { ConnectionPool } from "./connection-pool.js";

/** Limits of one outbound request. */
export interface OutboundLimits {
  /** From the start until the TCP (and TLS) connection is up. Default 5000 ms. */
  connectTimeoutMs?: number;
  /** From the start until the response body was read (up to {@link maxResponseBytes}). Default 10000 ms. */
  responseTimeoutMs?: number;
  /** Bytes of the response body kept; the connection is closed past them. Default 4096. */
  maxResponseBytes?: number;
}

/** What the receiver answered. A redirect is an answer like any other: it is never followed. */
export interface OutboundResponse {
  outcome: "answered";
  status: number;
  /** At most `maxResponseBytes` of the body, as text. */
  body: string;
  /** True when the body was cut at `maxResponseBytes`. */
  truncated: boolean;
  /** The address the request went to (the one the policy checked). */
  address: string;
}

/** Why no answer came. `refused`: the policy forbade every address the name resolved to (nothing was sent). */
export interface OutboundFailure {
  outcome: "refused" | "timeout" | "network";
  reason: string;
  address?: string;
}

export type OutboundResult = OutboundResponse | OutboundFailure;

/** How a name becomes addresses; replaceable only so a test can point a name at a chosen address. */
export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * A URL as it may appear in logs, errors and the web view: scheme, host, port and path, never its
 * query, fragment or credentials (a per-task URL may carry a token there).
 */
export function displayUrl(url: string | URL): string {
  try {
    const parsed = typeof url === "string" ? new URL(url) : url;
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}

/**
 * The address a request to `url` may go to: the name is resolved once, every address it resolves
 * to is checked against `policy`, and the first allowed one is returned, so the connection that
 * follows goes to an address that was checked (a second resolution could answer differently: DNS
 * rebinding). `refused` when none is allowed.
 */
export async function checkedAddress(
  url: URL,
  policy: AddressPolicy,
  resolve: Resolver = systemResolver,
): Promise<{ address: string } | { refused: string }> {
  const host = plainAddress(url.hostname);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      return { refused: `${host} does not resolve (${error instanceof Error ? error.message : String(error)})` };
    }
  }
  const refusals: string[] = [];
  for (const address of addresses) {
    const refusal = policy.refusal(address);
    if (refusal === null) return { address: plainAddress(address) };
    refusals.push(refusal);
  }
  return { refused: refusals.length === 0 ? `${host} resolves to no address` : `${host}: ${refusals.join("; ")}` };
}

/** A `lookup` for node:net that answers every name with `address` (the checked one). */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all === true) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/**
 * POSTs `body` to `url` under the outbound rules: http(s) only; the name resolved once and the
 * connection pinned to the checked address (see {@link checkedAddress}); no redirect followed (a
 * 3xx is returned as the answer); bounded connect and response times; at most `maxResponseBytes`
 * of the response read. Never throws for what the network does: every failure is a result.
 * With a `pool`, connections are kept alive per checked address (see {@link ConnectionPool}); the
 * name is still resolved and checked on every call.
 * Nothing here logs: the caller decides what of the result to record (never the headers it sent).
 */
export async function outboundPost(
  url: string,
  request: { headers: Record<string, string>; body: string },
  policy: AddressPolicy,
  limits: OutboundLimits = {},
  resolve?: Resolver,
  pool?: ConnectionPool,
): Promise<OutboundResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { outcome: "refused", reason: "not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { outcome: "refused", reason: `${parsed.protocol} URLs are not called (http and https only)` };
  }
  if (parsed.username !== "" || parsed.password !== "") return { outcome: "refused", reason: "URLs with credentials are not called" };
  const checked = await checkedAddress(parsed, policy, resolve);
  if ("refused" in checked) return { outcome: "refused", reason: checked.refused };
  const address = checked.address;
  const connectTimeoutMs = limits.connectTimeoutMs ?? 5000;
  const responseTimeoutMs = limits.responseTimeoutMs ?? 10_000;
  const maxResponseBytes = limits.maxResponseBytes ?? 4096;
  const client = parsed.protocol === "https:" ? https : http;

  const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port);
  const agent = pool?.agentFor(parsed.protocol, address, port, parsed.hostname) ?? false;

  return new Promise<OutboundResult>((settle) => {
    let done = false;
    let req: http.ClientRequest | undefined;
    let connectTimer: NodeJS.Timeout | undefined;
    const finish = (result: OutboundResult, keepConnection = false): void => {
      if (done) return;
      done = true;
      clearTimeout(responseTimer);
      clearTimeout(connectTimer);
      // A response read to its end leaves its connection to the pool; anything else closes it.
      if (!keepConnection || agent === false) req?.destroy();
      settle(result);
    };
    const responseTimer = setTimeout(
      () => finish({ outcome: "timeout", reason: `no answer within ${responseTimeoutMs} ms`, address }),
      responseTimeoutMs,
    );
    const send = (isRetry: boolean): void => {
      const current = client.request(parsed, {
        method: "POST",
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(address),
        // Pooled only per checked address (see ConnectionPool); without a pool, one connection per request.
        agent,
      });
      req = current;
      clearTimeout(connectTimer);
      connectTimer = setTimeout(
        () => finish({ outcome: "timeout", reason: `no connection within ${connectTimeoutMs} ms`, address }),
        connectTimeoutMs,
      );
      current.on("socket", (socket) => {
        if (current.reusedSocket) clearTimeout(connectTimer);
        else socket.once(parsed.protocol === "https:" ? "secureConnect" : "connect", () => clearTimeout(connectTimer));
      });
      current.on("error", (error: NodeJS.ErrnoException) => {
        if (current !== req) return;
        // A kept connection the receiver closed while it was idle fails as soon as it is written
        // to, before any answer: that is no answer from the receiver, so the request is sent once
        // more on a new connection (to the same checked address).
        if (
          !isRetry &&
          current.reusedSocket &&
          (error.code === "ECONNRESET" || error.code === "EPIPE") &&
          pool !== undefined &&
          agent !== false
        ) {
          pool.dropIdle(agent);
          send(true);
          return;
        }
        finish({ outcome: "network", reason: error.message, address });
      });
      current.on("response", (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = (truncated: boolean): void =>
          finish(
            {
              outcome: "answered",
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString("utf8"),
              truncated,
              address,
            },
            !truncated,
          );
        response.on("data", (chunk: Buffer) => {
          const room = maxResponseBytes - size;
          if (chunk.length >= room) {
            chunks.push(chunk.subarray(0, room));
            size = maxResponseBytes;
            answer(true);
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        response.on("end", () => answer(false));
        response.on("error", () => answer(true));
      });
      current.end(request.body);
    };
    send(false);
  });
}
