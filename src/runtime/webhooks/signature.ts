/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
 * bytes of a `whsec_<base64>` secret. Any Standard Webhooks library verifies what this signs.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

const PREFIX = "whsec_";

/**
 * The key bytes of a Standard Webhooks secret (`whsec_` followed by base64; the prefix may be
 * left out, as the reference libraries allow).
 * @throws Error when the secret is not base64 or shorter than 16 bytes (the message never shows it).
 */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new Error("the webhook secret is not of the form whsec_<base64>");
  const key = Buffer.from(encoded, "base64");
  if (key.length < 16) throw new Error("the webhook secret is too short: at least 16 bytes (24 base64 characters) after whsec_");
  return key;
}

/** The `v1,…` signature of one message. */
export function sign(key: Buffer, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers of a delivery. */
export function signatureHeaders(key: Buffer, id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": sign(key, id, timestampSeconds, body),
  };
}

/** Why {@link verifySignature} refused a delivery. */
export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError";
}

/**
 * Checks a received delivery: the signature (any of the space-separated `v1,` ones, compared in
 * constant time) and a timestamp within `toleranceSeconds` of now (default 300, against replays).
 * Returns the parsed body. For receivers: `mcp-tasks/client` exports it.
 * @throws WebhookSignatureError
 */
export function verifySignature(
  secret: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): unknown {
  const header = (name: string): string => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    const text = Array.isArray(value) ? value[0] : value;
    if (text === undefined || text === "") throw new WebhookSignatureError(`missing ${name} header`);
    return text;
  };
  const id = header("webhook-id");
  const timestamp = Number(header("webhook-timestamp"));
  const signatures = header("webhook-signature");
  if (!Number.isInteger(timestamp)) throw new WebhookSignatureError("webhook-timestamp is not a number of seconds");
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - timestamp) > tolerance) throw new WebhookSignatureError("webhook-timestamp is too far from now");
  const expected = Buffer.from(sign(secretKey(secret), id, timestamp, body));
  const matches = signatures.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookSignatureError("no matching signature");
  return JSON.parse(body) as unknown;
}
