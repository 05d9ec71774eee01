/**
 * Production authentication on Streamable HTTP: bearer JWTs verified against a real JWKS served
 * over loopback, with the official SDK client (T-SEC-1: the owner is issuer + subject, so a
 * refreshed token keeps its tasks; T-SEC-3: another subject cannot reach them). Keys are real
 * (generated here with jose); nothing is mocked.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { jwtVerifier } from "../../src/http/auth/jwt-verifier.js";
import type { HttpOptions } from "../../src/http/http-server.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { callToolAsTask, captureLogger, expectRpcError, getTask, listTasks, taskResult } from "../support/conformance.js";
import {
  connectHttpClient,
  rawPost,
  rawRequest,
  startHttpServer,
  type HttpClient,
  type HttpServerFixture,
  type RawResponse,
} from "../support/http-fixture.js";
import { startJwks, type JwksIssuer } from "../support/jwks.js";

const ISSUER = "https://issuer.test";
const AUDIENCE = "mcp-tasks-e2e";
const SCOPE = "tasks:run";
const KID = "key-1";

let signing: CryptoKey;
let forger: CryptoKey;
let jwksUrl: string;
/** The public signing key as the JWKS serves it. */
let publicJwk: Record<string, unknown>;
let issuer: JwksIssuer;

beforeAll(async () => {
  issuer = await startJwks(KID);
  ({ signing, publicJwk, url: jwksUrl } = issuer);
  // Another key claiming the same kid: the JWKS lookup finds ours, the signature cannot verify.
  forger = (await generateKeyPair("ES256")).privateKey;
});

afterAll(() => issuer.close());

let fx: HttpServerFixture | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const now = (): number => Math.floor(Date.now() / 1000);

/** A signed access token: valid for alice with the required scope unless `claims`/`key` say otherwise. */
async function mint(claims: JWTPayload = {}, key: CryptoKey = signing): Promise<string> {
  const iat = now();
  return new SignJWT({ scope: `openid ${SCOPE}`, ...claims })
    .setProtectedHeader({ alg: "ES256", kid: KID, typ: "at+jwt" })
    .setIssuer(typeof claims.iss === "string" ? claims.iss : ISSUER)
    .setAudience(claims.aud ?? AUDIENCE)
    .setSubject(typeof claims.sub === "string" ? claims.sub : "alice")
    .setIssuedAt(claims.iat ?? iat)
    .setExpirationTime(claims.exp ?? iat + 300)
    .setJti(randomUUID())
    .sign(key);
}

function start(http: HttpOptions = {}, logger = captureLogger()): Promise<HttpServerFixture> {
  return startHttpServer({
    app: { logger },
    http: {
      verifier: jwtVerifier({ jwksUrl, issuer: ISSUER, audience: AUDIENCE, requiredScopes: [SCOPE] }),
      protectedResource: { authorizationServers: [ISSUER], scopesSupported: [SCOPE] },
      ...http,
    },
  });
}

const initialize = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

/** The WWW-Authenticate challenge of a refused initialize sent with `token`, as a parameter map. */
async function refusal(url: URL, token: string | null): Promise<{ status: number; challenge: Record<string, string>; body: unknown }> {
  const res = await rawPost(url, initialize, token === null ? {} : { authorization: `Bearer ${token}` });
  const header = res.headers.get("www-authenticate") ?? "";
  expect(header).toMatch(/^Bearer /);
  const challenge = Object.fromEntries([...header.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
  return { status: res.status, challenge, body: res.json };
}

function metadataUrl(fixture: HttpServerFixture): string {
  return new URL("/.well-known/oauth-protected-resource/mcp", fixture.url).href;
}

describe("JWT bearer auth on Streamable HTTP", () => {
  it("lets a valid JWT create a task and get its result end to end with the SDK client", async () => {
    fx = await start();
    const alice = await fx.connect({ token: await mint() });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    const result = await taskResult(alice.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 1 ms" }]);
  });

  it("refuses a request without a token: 401 with a bare Bearer challenge (no error code, RFC 6750 §3.1) pointing at the metadata document", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, null);
    expect(status).toBe(401);
    expect(challenge).toEqual({ resource_metadata: metadataUrl(fx) });
    // The SDK client without a token sees the same 401.
    const refused = await fx.connect({ waitForGetStream: false }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it("refuses a token expired beyond the clock tolerance: 401 invalid_token 'expired'", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, await mint({ iat: now() - 600, exp: now() - 60 }));
    expect(status).toBe(401);
    expect(challenge).toMatchObject({
      error: "invalid_token",
      error_description: "the token has expired",
      resource_metadata: metadataUrl(fx),
    });
  });

  it("accepts a token expired by less than the clock tolerance (skew between issuer and server)", async () => {
    fx = await start();
    const res = await rawPost(fx.url, initialize, { authorization: `Bearer ${await mint({ iat: now() - 600, exp: now() - 10 })}` });
    expect(res.status).toBe(200);
  });

  it("refuses a token that is not yet valid (nbf in the future): 401 invalid_token", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, await mint({ nbf: now() + 300 }));
    expect(status).toBe(401);
    expect(challenge).toMatchObject({ error: "invalid_token", error_description: "the token is not yet valid" });
  });

  it("refuses a forged token (signed by another key under the same kid): 401 invalid_token", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, await mint({}, forger));
    expect(status).toBe(401);
    expect(challenge).toMatchObject({ error: "invalid_token", error_description: "the token signature does not verify" });
  });

  it("refuses a token from another issuer: 401 invalid_token", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, await mint({ iss: "https://evil.test" }));
    expect(status).toBe(401);
    expect(challenge).toMatchObject({ error: "invalid_token", error_description: "unexpected token issuer" });
  });

  it("refuses a token issued for another audience: 401 invalid_token", async () => {
    fx = await start();
    const { status, challenge } = await refusal(fx.url, await mint({ aud: "some-other-api" }));
    expect(status).toBe(401);
    expect(challenge).toMatchObject({ error: "invalid_token", error_description: "unexpected token audience" });
  });

  it("refuses malformed tokens: 401 invalid_token 'malformed token'", async () => {
    fx = await start();
    const valid = await mint();
    for (const token of ["not-a-jwt", "a.b.c", `${valid.split(".").slice(0, 2).join(".")}.!!!`]) {
      const { status, challenge } = await refusal(fx.url, token);
      expect(status).toBe(401);
      expect(challenge["error"]).toBe("invalid_token");
    }
    expect((await refusal(fx.url, "not-a-jwt")).challenge["error_description"]).toBe("malformed token");
  });

  it("answers a valid token lacking a required scope with 403 insufficient_scope naming the scope", async () => {
    fx = await start();
    const { status, challenge, body } = await refusal(fx.url, await mint({ scope: "openid" }));
    expect(status).toBe(403);
    expect(challenge).toMatchObject({ error: "insufficient_scope", scope: SCOPE, resource_metadata: metadataUrl(fx) });
    expect(body).toMatchObject({ error: { message: expect.stringMatching(/^Forbidden/) } });
  });

  it("takes the scopes from an `scp` array as well as from `scope`", async () => {
    fx = await start();
    const res = await rawPost(fx.url, initialize, { authorization: `Bearer ${await mint({ scope: undefined, scp: [SCOPE] })}` });
    expect(res.status).toBe(200);
  });

  it("keeps a subject's tasks across a token refresh: a new token on a new session gets the old task's result (T-SEC-1)", async () => {
    fx = await start();
    const first = await fx.connect({ token: await mint({ iat: now() - 60 }) });
    const created = await callToolAsTask(first.client, "sleep", { ms: 2 });
    await first.close();

    const refreshed = await fx.connect({ token: await mint({ exp: now() + 900 }) });
    expect((await getTask(refreshed.client, created.task.taskId)).taskId).toBe(created.task.taskId);
    expect((await taskResult(refreshed.client, created.task.taskId)).content).toEqual([{ type: "text", text: "slept 2 ms" }]);
    expect((await listTasks(refreshed.client)).tasks.map((t) => t.taskId)).toEqual([created.task.taskId]);
  });

  it("hides a subject's task from another subject of the same issuer: -32602 not found (T-SEC-3)", async () => {
    fx = await start();
    const alice = await fx.connect({ token: await mint() });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 3 });
    const bob: HttpClient = await fx.connect({ token: await mint({ sub: "bob" }) });
    await expectRpcError(getTask(bob.client, created.task.taskId), -32602, /not found/i);
    await expectRpcError(taskResult(bob.client, created.task.taskId), -32602, /not found/i);
    expect((await listTasks(bob.client)).tasks).toEqual([]);
  });

  it("serves the protected-resource metadata (RFC 9728) at the root and /mcp-suffixed well-known paths", async () => {
    fx = await start();
    const expected = {
      resource: fx.http.url,
      authorization_servers: [ISSUER],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ["header"],
    };
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await rawRequest(new URL(path, fx.url), "GET");
      expect(res.status).toBe(200);
      expect(res.json).toEqual(expected);
      expect(OAuthProtectedResourceMetadataSchema.parse(res.json)).toMatchObject(expected);
    }
  });

  it("advertises a configured resource URL, and its metadata URL in the challenge", async () => {
    fx = await start({ protectedResource: { resource: "https://mcp.example.com/api/mcp", authorizationServers: [ISSUER] } });
    const res = await rawRequest(new URL("/.well-known/oauth-protected-resource/api/mcp", fx.url), "GET");
    expect(res.json).toEqual({
      resource: "https://mcp.example.com/api/mcp",
      authorization_servers: [ISSUER],
      bearer_methods_supported: ["header"],
    });
    expect((await refusal(fx.url, null)).challenge["resource_metadata"]).toBe(
      "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
    );
  });

  it("serves no metadata document when JWT auth is not configured", async () => {
    fx = await startHttpServer();
    expect((await rawRequest(new URL("/.well-known/oauth-protected-resource", fx.url), "GET")).status).toBe(404);
  });

  it("never writes a token into a log line, accepted or refused", async () => {
    const logger = captureLogger();
    fx = await start({}, logger);
    const tokens = [await mint(), await mint({ aud: "other" }), await mint({ scope: "openid" }), await mint({}, forger)];
    const alice = await fx.connect({ token: tokens[0] ?? "" });
    await taskResult(alice.client, (await callToolAsTask(alice.client, "sleep", { ms: 4 })).task.taskId);
    for (const token of tokens.slice(1)) await refusal(fx.url, token);
    expect(logger.entries.length).toBeGreaterThan(0);
    const logged = JSON.stringify(logger.entries);
    for (const token of tokens) {
      expect(logged).not.toContain(token);
      expect(logged).not.toContain(token.split(".")[2]);
    }
  });
});

/** A JWKS server on loopback that answers the key set, or HTTP 500 while `failing` is set. */
interface KeyServer {
  url: string;
  failing: boolean;
  close(): Promise<void>;
}

async function keyServer(): Promise<KeyServer> {
  const state = { failing: true };
  const server = createServer((_req, res) => {
    if (state.failing) res.writeHead(500, { "content-type": "text/plain" }).end("key store down");
    else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** The URL of a JWKS server that is not running: a loopback port that was just free (connection refused). */
async function stoppedKeyServerUrl(): Promise<string> {
  const server = await keyServer();
  await server.close();
  return server.url;
}

function verifierAt(url: string): HttpOptions["verifier"] {
  return jwtVerifier({ jwksUrl: url, issuer: ISSUER, audience: AUDIENCE, requiredScopes: [SCOPE] });
}

/** What a request refused for want of the issuer's keys must look like: 503, Retry-After, a JSON-RPC error, no challenge. */
function expectUnavailable(res: RawResponse): void {
  expect(res.status).toBe(503);
  expect(res.headers.get("retry-after")).toBe("5");
  // Not an OAuth challenge: the token was not judged, so the client must not discard it.
  expect(res.headers.get("www-authenticate")).toBeNull();
  expect(res.json).toEqual({
    jsonrpc: "2.0",
    id: null,
    error: { code: -32603, message: "Service unavailable: bearer tokens cannot be verified right now; retry later" },
  });
}

describe("JWT bearer auth while the issuer's key server is unavailable", () => {
  const keyServers: KeyServer[] = [];
  afterEach(async () => {
    for (const server of keyServers.splice(0)) await server.close();
  });

  async function failingKeyServer(): Promise<KeyServer> {
    const server = await keyServer();
    keyServers.push(server);
    return server;
  }

  it("answers 503 with a JSON-RPC -32603 error and Retry-After, not 401, when the JWKS server refuses connections", async () => {
    fx = await start({ verifier: verifierAt(await stoppedKeyServerUrl()) });
    expectUnavailable(await rawPost(fx.url, initialize, { authorization: `Bearer ${await mint()}` }));
  });

  it("answers 503 with a JSON-RPC -32603 error and Retry-After, not 401, when the JWKS server answers 500", async () => {
    const keys = await failingKeyServer();
    fx = await start({ verifier: verifierAt(keys.url) });
    expectUnavailable(await rawPost(fx.url, initialize, { authorization: `Bearer ${await mint()}` }));
  });

  it("logs a warning naming the JWKS and why it could not be fetched, never the token", async () => {
    const logger = captureLogger();
    const url = await stoppedKeyServerUrl();
    fx = await start({ verifier: verifierAt(url) }, logger);
    const token = await mint();
    await rawPost(fx.url, initialize, { authorization: `Bearer ${token}` });
    const warning = logger.entries.find((e) => e.msg === "bearer token not verified: the key source is unavailable");
    expect(warning?.level).toBe("warn");
    expect(warning?.obj["reason"]).toMatch(
      new RegExp(`^cannot fetch the JWKS at ${url.replace(/[.]/g, "\\.")}: fetch failed \\(.*ECONNREFUSED`),
    );
    expect(logger.entries.filter((e) => e.level === "error")).toEqual([]);
    expect(JSON.stringify(logger.entries)).not.toContain(token);
  });

  it("still answers a request without a token with the bare 401 challenge (nothing to verify, so no key is needed)", async () => {
    fx = await start({ verifier: verifierAt(await stoppedKeyServerUrl()) });
    const { status, challenge } = await refusal(fx.url, null);
    expect(status).toBe(401);
    expect(challenge).toEqual({ resource_metadata: metadataUrl(fx) });
  });

  it("accepts the same token once the JWKS server answers again: a failed fetch is not remembered", async () => {
    const keys = await failingKeyServer();
    fx = await start({ verifier: verifierAt(keys.url) });
    const token = await mint();
    expect((await rawPost(fx.url, initialize, { authorization: `Bearer ${token}` })).status).toBe(503);
    keys.failing = false;
    expect((await rawPost(fx.url, initialize, { authorization: `Bearer ${token}` })).status).toBe(200);
  });

  it("answers the web view API with the same 503 (it verifies the same tokens)", async () => {
    const verifier = verifierAt(await stoppedKeyServerUrl());
    fx = await startHttpServer({ http: { verifier }, routes: (app) => webRoutes(app, { verifier }) });
    expectUnavailable(await rawRequest(new URL("/tasks/api/session", fx.url), "GET", { authorization: `Bearer ${await mint()}` }));
  });
});

describe("serve --jwt-* (CLI)", { timeout: 60_000 }, () => {
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-jwt-"));
    dirs.push(dir);
    return dir;
  }

  it("accepts a valid token and refuses a bad one with --jwt-issuer, --jwt-audience, --jwt-public-key FILE (PEM)", async () => {
    const pair = await generateKeyPair("RS256");
    const keyFile = join(tempDir(), "issuer.pem");
    writeFileSync(keyFile, await exportSPKI(pair.publicKey));
    const server = CliProcess.spawn([
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--jwt-issuer",
      ISSUER,
      "--jwt-audience",
      AUDIENCE,
      "--jwt-public-key",
      keyFile,
    ]);
    const url = await server.url();
    const line = await server.stderr.waitFor((l) => typeof l["url"] === "string", "the listening line");
    expect(line["auth"]).toBe("jwt");

    const sign = (key: typeof pair.privateKey) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "RS256" })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject("carol")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(key);
    const good = await sign(pair.privateKey);
    const client = await connectHttpClient(url, { token: good });
    try {
      const created = await callToolAsTask(client.client, "sleep", { ms: 5 });
      expect((await taskResult(client.client, created.task.taskId)).content).toEqual([{ type: "text", text: "slept 5 ms" }]);
    } finally {
      await client.close();
    }
    const bad = await sign((await generateKeyPair("RS256")).privateKey);
    const refused = await rawPost(url, initialize, { authorization: `Bearer ${bad}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const metadata = await rawRequest(new URL("/.well-known/oauth-protected-resource/mcp", url), "GET");
    expect(metadata.json).toMatchObject({ resource: url, authorization_servers: [ISSUER] });
    expect(server.stderrText).not.toContain(good);
    expect(server.stderrText).not.toContain(bad);
  });

  it("refuses inconsistent auth flags with a clear message: no key source, both key sources, --auth-tokens with JWT, JWT flags without an issuer", async () => {
    const base = ["serve", "--demo", "--store", "memory", "--port", "0"];
    const cases: [string[], RegExp][] = [
      [["--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE], /exactly one key source: --jwt-jwks-url URL or --jwt-public-key FILE/],
      [
        ["--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE, "--jwt-jwks-url", "https://x.test/jwks", "--jwt-public-key", "k.pem"],
        /exactly one key source/,
      ],
      [["--jwt-issuer", ISSUER, "--jwt-jwks-url", "https://x.test/jwks"], /--jwt-issuer needs --jwt-audience/],
      [
        ["--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE, "--jwt-jwks-url", "https://x.test/jwks", "--auth-tokens", "t.json"],
        /--auth-tokens .* and --jwt-issuer .* are exclusive/,
      ],
      [["--jwt-audience", AUDIENCE, "--jwt-scopes", "a,b"], /--jwt-audience, --jwt-scopes configure JWT auth: pass --jwt-issuer too/],
    ];
    for (const [flags, message] of cases) {
      const run = await runCli([...base, ...flags]);
      expect(run.code).toBe(ExitCode.Usage);
      expect(run.stderr).toMatch(message);
    }
  });
});
