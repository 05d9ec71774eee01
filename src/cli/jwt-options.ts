import { readFileSync } from "node:fs";
import { InvalidArgumentError } from "commander";
import type { BearerVerifier } from "../http/bearer-auth.js";
import type { ProtectedResourceOptions } from "../http/auth/protected-resource.js";

/** The `serve` flags of JWT authentication, as commander parsed them. */
export interface JwtFlags {
  jwtIssuer?: string;
  jwtAudience?: string;
  jwtJwksUrl?: string;
  jwtPublicKey?: string;
  jwtScopes?: string[];
  jwtClockTolerance?: number;
  jwtMaxLifetime?: number;
  resourceUrl?: string;
  authTokens?: string;
}

/** A combination of auth flags that cannot work; the message names the flags to fix. */
export class AuthFlagsError extends Error {
  override readonly name = "AuthFlagsError";
}

/** Parses an http(s) URL option. */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("expected an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new InvalidArgumentError("expected an http(s) URL");
  // The value as given, not url.href: an issuer is compared to `iss` exactly, and href would add a "/".
  return value;
}

/** Parses a comma-separated scope list (scope tokens per RFC 6749 §3.3: no spaces, no quotes). */
export function scopeList(value: string): string[] {
  const scopes = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (scopes.length === 0) throw new InvalidArgumentError("expected one or more comma-separated scopes");
  for (const scope of scopes) if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new InvalidArgumentError(`not a valid scope: ${scope}`);
  return scopes;
}

/** The JWT flags that only mean something with --jwt-issuer, those given. */
function jwtDependentFlagsGiven(flags: JwtFlags): string[] {
  return (
    [
      ["--jwt-audience", flags.jwtAudience],
      ["--jwt-jwks-url", flags.jwtJwksUrl],
      ["--jwt-public-key", flags.jwtPublicKey],
      ["--jwt-scopes", flags.jwtScopes],
      ["--jwt-clock-tolerance", flags.jwtClockTolerance],
      ["--jwt-max-lifetime", flags.jwtMaxLifetime],
      ["--resource-url", flags.resourceUrl],
    ] as const
  )
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
}

/**
 * Refuses every auth flag under `--stdio`, which has no bearer tokens to check (its one client is
 * whoever started the process). Ignoring them would hand an operator who asked for authentication
 * a server running without it.
 */
export function refuseAuthOverStdio(flags: JwtFlags): void {
  const given = [
    ...(flags.authTokens !== undefined ? ["--auth-tokens"] : []),
    ...(flags.jwtIssuer !== undefined ? ["--jwt-issuer"] : []),
    ...jwtDependentFlagsGiven(flags),
  ];
  if (given.length === 0) return;
  throw new AuthFlagsError(
    `${given.join(", ")} configure${given.length === 1 ? "s" : ""} HTTP authentication, which --stdio does not have (its one client is whoever started the process): drop --stdio to serve HTTP with authentication, or drop ${given.length === 1 ? "that flag" : "those flags"}`,
  );
}

/**
 * The JWT verifier and metadata document the flags ask for, or null when JWT auth is off.
 * Checked together, before anything listens, so a half-configured server never starts open.
 */
export async function jwtAuthFrom(
  flags: JwtFlags,
): Promise<{ verifier: BearerVerifier; protectedResource: ProtectedResourceOptions } | null> {
  const dependent = jwtDependentFlagsGiven(flags);
  const issuer = flags.jwtIssuer;
  if (issuer === undefined) {
    if (dependent.length > 0) throw new AuthFlagsError(`${dependent.join(", ")} configure JWT auth: pass --jwt-issuer too`);
    return null;
  }
  if (flags.authTokens !== undefined) {
    throw new AuthFlagsError("--auth-tokens (static development tokens) and --jwt-issuer (JWT auth) are exclusive: pass one of them");
  }
  if (flags.jwtAudience === undefined)
    throw new AuthFlagsError("--jwt-issuer needs --jwt-audience (the audience tokens must be issued for)");
  if ((flags.jwtJwksUrl === undefined) === (flags.jwtPublicKey === undefined)) {
    throw new AuthFlagsError("--jwt-issuer needs exactly one key source: --jwt-jwks-url URL or --jwt-public-key FILE");
  }
  let keySource: { jwksUrl: string } | { publicKey: string };
  if (flags.jwtJwksUrl !== undefined) keySource = { jwksUrl: flags.jwtJwksUrl };
  else {
    const file = flags.jwtPublicKey ?? "";
    try {
      keySource = { publicKey: readFileSync(file, "utf8") };
    } catch (error) {
      throw new AuthFlagsError(`--jwt-public-key ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  // jose is loaded only for a server that verifies JWTs: most starts have no use for it.
  const { jwtVerifier } = await import("../http/auth/jwt-verifier.js");
  const verifier = jwtVerifier({
    ...keySource,
    issuer,
    audience: flags.jwtAudience,
    ...(flags.jwtScopes && { requiredScopes: flags.jwtScopes }),
    ...(flags.jwtClockTolerance !== undefined && { clockToleranceSec: flags.jwtClockTolerance }),
    ...(flags.jwtMaxLifetime !== undefined && { maxLifetimeSec: flags.jwtMaxLifetime }),
  });
  return {
    verifier,
    protectedResource: {
      authorizationServers: [issuer],
      ...(flags.jwtScopes && { scopesSupported: flags.jwtScopes }),
      ...(flags.resourceUrl !== undefined && { resource: flags.resourceUrl }),
    },
  };
}
