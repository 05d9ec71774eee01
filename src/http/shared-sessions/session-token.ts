import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/** What a shared session remembers of its initialization. */
export interface SessionClaims {
  /** The principal that initialized it (null without auth). */
  principal: string | null;
  capabilities: ClientCapabilities;
  protocolVersion: string;
}

/**
 * Session ids any node of a cluster can check without shared state: the claims, base64url, and
 * an HMAC under the store's secret. A node that receives a request with such an id knows who
 * opened the session and what the client can answer, whichever node initialized it.
 */
export class SessionTokenCodec {
  /**
   * Ids verified lately, most recent last: every request of a session carries its id, and the
   * HMAC plus parse was a few percent of a front's CPU. Only ids that verified are kept, so a
   * forged one is checked in full every time.
   */
  private readonly verified = new Map<string, SessionClaims>();

  constructor(
    private readonly secret: Buffer,
    private readonly maxVerified = 4096,
  ) {}

  issue(claims: SessionClaims): string {
    const body = Buffer.from(
      JSON.stringify({
        p: claims.principal,
        c: trimCapabilities(claims.capabilities),
        v: claims.protocolVersion,
        n: randomBytes(9).toString("base64url"),
      }),
    ).toString("base64url");
    return `s1.${body}.${this.mac(body)}`;
  }

  /** The claims of a session id this cluster issued, or null for anything else. */
  read(token: string): SessionClaims | null {
    const known = this.verified.get(token);
    if (known) {
      this.verified.delete(token);
      this.verified.set(token, known);
      return known;
    }
    const claims = this.verify(token);
    if (claims) {
      if (this.verified.size >= this.maxVerified) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, claims);
    }
    return claims;
  }

  private verify(token: string): SessionClaims | null {
    if (token.length > 4096) return null;
    const [version, body, mac] = token.split(".");
    if (version !== "s1" || !body || !mac) return null;
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.mac(body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      const parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { p?: unknown; c?: unknown; v?: unknown };
      if (
        (parsed.p !== null && typeof parsed.p !== "string") ||
        typeof parsed.v !== "string" ||
        typeof parsed.c !== "object" ||
        parsed.c === null
      ) {
        return null;
      }
      return Object.freeze({ principal: parsed.p, capabilities: parsed.c as ClientCapabilities, protocolVersion: parsed.v });
    } catch {
      return null;
    }
  }

  private mac(body: string): string {
    return createHmac("sha256", this.secret).update("mcp-session\u0000").update(body).digest("base64url");
  }
}

/** Keeps the parts of the capabilities the server acts on, so the header stays small. */
function trimCapabilities(capabilities: ClientCapabilities): ClientCapabilities {
  const { elicitation, sampling, roots, tasks } = capabilities;
  return {
    ...(elicitation !== undefined && { elicitation }),
    ...(sampling !== undefined && { sampling }),
    ...(roots !== undefined && { roots }),
    ...(tasks !== undefined && { tasks }),
  };
}
