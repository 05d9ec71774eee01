import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Headers of every web view response. The page renders data with DOM text APIs only; the policy
 * is the second line of defence: no inline script, no foreign origin, no framing.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/**
 * A file of `static/` (next to this module, in the sources and in the build alike), read once:
 * the page is a few kilobytes, and reading it per request would only add latency.
 */
export function staticAsset(name: string, type: string): Asset {
  const body = readFileSync(new URL(`./static/${name}`, import.meta.url));
  return { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
}

/** Sends an asset; revalidated on each load (no-cache), so an upgraded server never serves a stale page. */
export function sendAsset(req: IncomingMessage, res: ServerResponse, asset: Asset): void {
  const headers = { ...SECURITY_HEADERS, "content-type": asset.type, etag: asset.etag, "cache-control": "no-cache" };
  if (req.headers["if-none-match"] === asset.etag) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, { ...headers, "content-length": String(asset.body.length) });
  res.end(req.method === "HEAD" ? undefined : asset.body);
}
