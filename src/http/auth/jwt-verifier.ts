import { createPublicKey, type JsonWebKey, type KeyObject } from "node:crypto";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ScopeRequiredError, VerifierUnavailableError, type BearerVerifier } from "../bearer-auth.js";
import { bearerTokenOf } from "../bearer-token.js";

/** Where the verification keys come from: exactly one of the two. */
export type JwtKeySource = { jwksUrl: string | URL } | { publicKey: string };

/** Options of {@link jwtVerifier}. */
export type JwtVerifierOptions = JwtKeySource & {
  /** Required `iss` (exact match). */
  issuer: string;
  /** Required `aud`: the token must name at least one of these. */
  audience: string | readonly string[];
  /** Scopes every token must carry (from `scope`, space-separated, or `scp`); none by default. */
  requiredScopes?: readonly string[];
  /** Leeway on `exp` and `nbf` for clock skew between us and the issuer; default 30 s. */
  clockToleranceSec?: number;
  /**
   * Longest lifetime a token may claim, in seconds; default 24 h. Measured from `iat` (`exp - iat`),
   * and in any case from now (`exp - now`, plus the clock tolerance), so neither a missing `iat`
   * nor one set in the future lets a token live longer. A token without `exp` is always refused.
   */
  maxLifetimeSec?: number;
  /** Accepted signature algorithms; default every asymmetric JWS algorithm (never HS*, never "none"). */
  algorithms?: readonly string[];
};

/** Asymmetric algorithms only: a symmetric one would let anyone holding the public key sign tokens. */
const ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];

/**
 * What a client is told to wait (Retry-After) when the issuer's keys cannot be fetched. Each
 * request tries the fetch again (jose keeps no back-off after a failure), so this only spaces one
 * client's retries; short, because a key server outage is usually brief.
 */
const KEYS_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Default of {@link JwtVerifierOptions.maxLifetimeSec}: a day, well past any access token an issuer hands out by default. */
const DEFAULT_JWT_MAX_LIFETIME_SECONDS = 86_400;

/** A misconfigured key source (unreadable PEM/JWK): a startup error, never a 401 at request time. */
export class JwtKeyError extends Error {
  override readonly name = "JwtKeyError";
}

/**
 * Parses a static public key given as PEM (SPKI or certificate) or as JWK JSON. A private key
 * is accepted and reduced to its public half, so the process never holds more than it needs.
 */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith("{")) return createPublicKey({ key: JSON.parse(trimmed) as JsonWebKey, format: "jwk" });
    return createPublicKey(trimmed);
  } catch (error) {
    throw new JwtKeyError(`not a PEM or JWK public key: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * A {@link BearerVerifier} for JWT access tokens (the MCP authorization spec's resource server
 * side). The principal is issuer + subject, never the token: a refreshed token for the same
 * subject keeps its sessions and its tasks (T-SEC-1), and a token never lands in a log or a key.
 */
export function jwtVerifier(options: JwtVerifierOptions): BearerVerifier {
  const keys: KeyObject | JWTVerifyGetKey = "jwksUrl" in options ? remoteKeys(new URL(options.jwksUrl)) : parsePublicKey(options.publicKey);
  const audience = typeof options.audience === "string" ? options.audience : [...options.audience];
  const requiredScopes = [...(options.requiredScopes ?? [])];
  const clockToleranceSec = options.clockToleranceSec ?? 30;
  const maxLifetimeSec = options.maxLifetimeSec ?? DEFAULT_JWT_MAX_LIFETIME_SECONDS;
  const verifyOptions = {
    issuer: options.issuer,
    audience,
    clockTolerance: clockToleranceSec,
    algorithms: [...(options.algorithms ?? ASYMMETRIC_ALGORITHMS)],
  };
  return async (req) => {
    const token = bearerTokenOf(req);
    // No credentials at all: the server answers with a bare challenge (RFC 6750 §3.1).
    if (token === null) return null;
    let payload: JWTPayload;
    try {
      // Two calls so each matches one of jwtVerify's overloads (key object / key resolver).
      payload =
        typeof keys === "function"
          ? (await jwtVerify(token, keys, verifyOptions)).payload
          : (await jwtVerify(token, keys, verifyOptions)).payload;
    } catch (error) {
      throw new InvalidTokenError(describeRejection(error));
    }
    // `exp` is required in a JWT access token (RFC 9068 §2.2): without it a stolen token would open the server for good.
    const expiresAt = payload.exp;
    if (expiresAt === undefined) throw new InvalidTokenError("the token has no expiration time (exp)");
    if (outlivesMaximum(expiresAt, payload.iat, maxLifetimeSec, clockToleranceSec)) {
      throw new InvalidTokenError(`the token's lifetime exceeds the ${maxLifetimeSec} s this server accepts`);
    }
    const subject = stringClaim(payload, "sub") ?? stringClaim(payload, "client_id") ?? stringClaim(payload, "azp");
    if (subject === undefined) throw new InvalidTokenError("the token names no subject");
    const scopes = scopesOf(payload);
    const missing = requiredScopes.filter((scope) => !scopes.includes(scope));
    if (missing.length > 0) throw new ScopeRequiredError(requiredScopes);
    // jose has checked iss equals the configured issuer.
    const issuer = options.issuer;
    return {
      token,
      clientId: `${issuer}|${subject}`,
      scopes,
      expiresAt,
      extra: { iss: issuer, sub: subject, principal: subject },
    } satisfies AuthInfo;
  };
}

/**
 * The issuer's JWKS (fetched, cached, refetched for an unknown kid), with every failure to obtain
 * it — unreachable, timed out, not 200, not a key set — as a {@link VerifierUnavailableError}
 * (→ 503): until the keys are in hand nothing can be said about the token. Only "no key for this
 * token" is the token's own fault. Left to jose, a refused connection or a 5xx was a 401
 * "malformed token", and a client would have thrown a good token away.
 */
function remoteKeys(url: URL): JWTVerifyGetKey {
  const keySet = createRemoteJWKSet(url);
  // For the operator's log: never the query string or credentials a URL might carry.
  const where = `${url.origin}${url.pathname}`;
  return async (header, token) => {
    try {
      return await keySet(header, token);
    } catch (error) {
      if (
        error instanceof errors.JWKSNoMatchingKey ||
        error instanceof errors.JWKSMultipleMatchingKeys ||
        error instanceof errors.JOSENotSupported
      ) {
        throw error;
      }
      throw new VerifierUnavailableError(`cannot fetch the JWKS at ${where}: ${reasonOf(error)}`, KEYS_UNAVAILABLE_RETRY_AFTER_SECONDS, {
        cause: error,
      });
    }
  };
}

/** An error's message with its cause's (fetch says "fetch failed"; the cause says ECONNREFUSED). */
function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}

/**
 * Why a token was refused, in words safe to send back: never the token, never a claim value.
 * A key source that cannot answer is not the client's fault: rethrown (→ 503).
 */
function describeRejection(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf" || error.claim === "iat") return "the token is not yet valid";
    if (error.claim === "iss") return "unexpected token issuer";
    if (error.claim === "aud") return "unexpected token audience";
    return `invalid token claim: ${error.claim}`;
  }
  if (
    error instanceof errors.JWSSignatureVerificationFailed ||
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return "the token signature does not verify";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's signature algorithm is not accepted";
  if (error instanceof VerifierUnavailableError) throw error;
  if (error instanceof errors.JOSEError) return "malformed token";
  if (error instanceof TypeError) return "malformed token";
  throw error;
}

/**
 * Whether a token claims a longer life than the server accepts: `exp - iat` when it has `iat`,
 * and `exp - now` (beyond the clock tolerance) in any case, so that neither a missing `iat` nor
 * one set in the future stretches it. jose has checked that both claims, when present, are numbers.
 */
function outlivesMaximum(exp: number, iat: number | undefined, maxLifetimeSec: number, clockToleranceSec: number): boolean {
  if (iat !== undefined && exp - iat > maxLifetimeSec) return true;
  return exp - Math.floor(Date.now() / 1000) > maxLifetimeSec + clockToleranceSec;
}

function stringClaim(payload: JWTPayload, name: string): string | undefined {
  const value = payload[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** `scope` (RFC 9068/8693: space-separated) or `scp` (common array form). */
function scopesOf(payload: JWTPayload): string[] {
  const scope = payload["scope"];
  if (typeof scope === "string") return scope.split(" ").filter((s) => s !== "");
  const scp = payload["scp"];
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === "string");
  if (typeof scp === "string") return scp.split(" ").filter((s) => s !== "");
  return [];
}
