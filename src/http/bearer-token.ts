import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerTokenOf(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  if (typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * A fixed set of secret tokens to check presented tokens against. Compares SHA-256 digests in
 * constant time and always against every entry, so response timing leaks neither a prefix nor
 * which entry matched.
 */
export class SecretSet {
  private readonly digests: Buffer[];

  constructor(secrets: Iterable<string>) {
    this.digests = [...secrets].filter((s) => s.length > 0).map(sha256);
  }

  get size(): number {
    return this.digests.length;
  }

  has(candidate: string | null): boolean {
    if (candidate === null) return false;
    const given = sha256(candidate);
    let found = false;
    for (const digest of this.digests) if (timingSafeEqual(digest, given)) found = true;
    return found;
  }
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
