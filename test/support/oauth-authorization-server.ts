import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose";

/** What the authorization server was asked, for assertions. */
export interface AuthorizationServerLog {
  registrations: Array<{ clientId: string; redirectUris: string[] }>;
  authorizations: Array<{ clientId: string; redirectUri: string; scope: string | null; resource: string | null; state: string | null }>;
  tokenRequests: Array<{ grantType: string; resource: string | null }>;
}

export interface AuthorizationServerOptions {
  /** The `aud` of the access tokens (the MCP server's configured audience). */
  audience: string;
  /** Lifetime of access tokens, seconds. */
  accessTtlSec?: number;
  /** Answer every authorization with `error=access_denied` (the person clicked "Deny"). */
  deny?: boolean;
}

export interface AuthorizationServerFixture {
  /** The issuer: what the MCP server names in its protected-resource metadata. */
  issuer: string;
  jwksUrl: string;
  log: AuthorizationServerLog;
  options: AuthorizationServerOptions;
  close(): Promise<void>;
}

/**
 * A small but real OAuth 2.1 authorization server for the CLI's tests, on loopback: RFC 8414
 * metadata, dynamic client registration (RFC 7591), the authorization endpoint (it "logs the user
 * in" at once: it redirects to the registered redirect URI with a code, as the suite's does),
 * PKCE S256 checked at the token endpoint, refresh tokens, and ES256 JWT access tokens verifiable
 * through its JWKS (what `mcp-tasks serve --jwt-issuer … --jwt-jwks-url …` checks).
 */
export async function startAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServerFixture> {
  const pair = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "as-1", alg: "ES256", use: "sig" };
  const clients = new Map<string, string[]>();
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; scope: string; resource: string | null }>();
  const refreshTokens = new Map<string, { clientId: string; scope: string; resource: string | null }>();
  const log: AuthorizationServerLog = { registrations: [], authorizations: [], tokenRequests: [] };
  let issuer = "";

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => json(res, 500, { error: "server_error", error_description: String(error) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", issuer);
    if (req.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server") {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        jwks_uri: `${issuer}/jwks.json`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (req.method === "GET" && url.pathname === "/jwks.json") return json(res, 200, { keys: [jwk] });
    if (req.method === "POST" && url.pathname === "/register") {
      const body = JSON.parse(await text(req)) as { redirect_uris?: string[] };
      const clientId = randomUUID();
      const redirectUris = body.redirect_uris ?? [];
      clients.set(clientId, redirectUris);
      log.registrations.push({ clientId, redirectUris });
      return json(res, 201, {
        ...body,
        client_id: clientId,
        client_id_issued_at: Math.floor(Date.now() / 1000),
        token_endpoint_auth_method: "none",
      });
    }
    if (req.method === "GET" && url.pathname === "/authorize") {
      const q = url.searchParams;
      const clientId = q.get("client_id") ?? "";
      const redirectUri = q.get("redirect_uri") ?? "";
      log.authorizations.push({ clientId, redirectUri, scope: q.get("scope"), resource: q.get("resource"), state: q.get("state") });
      // Exact redirect URI match against the registration (OAuth 2.1 §2.3.1): no open redirector.
      if (!clients.get(clientId)?.includes(redirectUri))
        return json(res, 400, { error: "invalid_request", error_description: "unregistered client or redirect_uri" });
      if (q.get("code_challenge_method") !== "S256" || !q.get("code_challenge"))
        return json(res, 400, { error: "invalid_request", error_description: "PKCE S256 required" });
      const back = new URL(redirectUri);
      if (q.get("state") !== null) back.searchParams.set("state", q.get("state")!);
      if (options.deny) {
        back.searchParams.set("error", "access_denied");
      } else {
        const code = randomUUID();
        codes.set(code, {
          clientId,
          redirectUri,
          challenge: q.get("code_challenge")!,
          scope: q.get("scope") ?? "",
          resource: q.get("resource"),
        });
        back.searchParams.set("code", code);
      }
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === "POST" && url.pathname === "/token") {
      const form = new URLSearchParams(await text(req));
      const grantType = form.get("grant_type") ?? "";
      log.tokenRequests.push({ grantType, resource: form.get("resource") });
      if (grantType === "authorization_code") {
        const grant = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = form.get("code_verifier") ?? "";
        if (!grant || grant.clientId !== form.get("client_id") || grant.redirectUri !== form.get("redirect_uri"))
          return json(res, 400, { error: "invalid_grant" });
        if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge)
          return json(res, 400, { error: "invalid_grant", error_description: "PKCE verifier mismatch" });
        return json(res, 200, await issue(grant.clientId, grant.scope, grant.resource));
      }
      if (grantType === "refresh_token") {
        const grant = refreshTokens.get(form.get("refresh_token") ?? "");
        if (!grant || grant.clientId !== form.get("client_id")) return json(res, 400, { error: "invalid_grant" });
        refreshTokens.delete(form.get("refresh_token") ?? "");
        return json(res, 200, await issue(grant.clientId, grant.scope, grant.resource));
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    json(res, 404, { error: "not_found" });
  }

  async function issue(clientId: string, scope: string, resource: string | null): Promise<Record<string, unknown>> {
    const ttl = options.accessTtlSec ?? 3600;
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({ scope, client_id: clientId })
      .setProtectedHeader({ alg: "ES256", kid: "as-1", typ: "at+jwt" })
      .setIssuer(issuer)
      .setAudience(options.audience)
      .setSubject("alice")
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .setJti(randomUUID())
      .sign(pair.privateKey as CryptoKey);
    const refreshToken = randomUUID();
    refreshTokens.set(refreshToken, { clientId, scope, resource });
    return { access_token: accessToken, token_type: "Bearer", expires_in: ttl, refresh_token: refreshToken, ...(scope && { scope }) };
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks.json`,
    log,
    options,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
