/**
 * OAuth 2.1 in the requestor CLI (the SDK's client auth provider with a loopback redirect, tokens
 * kept in the state directory), end to end with real processes: our
 * server with JWT auth (its protected-resource metadata names the authorization server), a real
 * authorization server on loopback (test/support/oauth-authorization-server.ts: DCR, exact
 * redirect URI match, PKCE, refresh tokens, JWTs), and `mcp-tasks` with $BROWSER set to a headless
 * stand-in that loads the authorization URL and follows its redirect to the CLI's callback.
 * The official suite's scenarios are in test/conformance/client/auth-0116.test.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jwtVerifier } from "../../src/http/auth/jwt-verifier.js";
import { AuthenticationError } from "../../src/cli/authentication-error.js";
import { LoopbackRedirect } from "../../src/cli/oauth/loopback-redirect.js";
import { killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import {
  startAuthorizationServer,
  type AuthorizationServerFixture,
  type AuthorizationServerOptions,
} from "../support/oauth-authorization-server.js";

const AUDIENCE = "mcp-tasks-oauth-e2e";
const SCOPE = "tasks:run";

let as: AuthorizationServerFixture | undefined;
let fx: HttpServerFixture | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await killAll();
  await fx?.close();
  await as?.close();
  fx = undefined;
  as = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The authorization server, and our server accepting its tokens (T-SEC-1: JWT bearer auth). */
async function start(
  options: Partial<AuthorizationServerOptions> = {},
): Promise<{ url: string; env: Record<string, string>; stateDir: string; opened: string }> {
  as = await startAuthorizationServer({ audience: AUDIENCE, ...options });
  fx = await startHttpServer({
    http: {
      verifier: jwtVerifier({ jwksUrl: as.jwksUrl, issuer: as.issuer, audience: AUDIENCE, requiredScopes: [SCOPE] }),
      protectedResource: { authorizationServers: [as.issuer], scopesSupported: [SCOPE] },
    },
  });
  const stateDir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-oauth-"));
  dirs.push(stateDir);
  const opened = join(stateDir, "opened.log");
  return {
    url: fx.url.href,
    stateDir,
    opened,
    env: {
      MCP_TASKS_STATE_DIR: stateDir,
      BROWSER: `${process.execPath} ${join(REPO_ROOT, "test/support/headless-browser.mjs")}`,
      OPENED_LOG: opened,
    },
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

describe("mcp-tasks and a server behind OAuth", () => {
  it("a call signs in through the browser by itself, then the next call reuses the stored token", async () => {
    const { url, env, opened } = await start();
    const first = await runCli(["call", url, "sleep", '{"ms":1}', "--no-task"], { env, timeoutMs: 60_000 });
    expect(first.stderr).toContain(`${url} needs authorization (OAuth)`);
    expect(first.stdout.trim()).toBe("slept 1 ms");
    expect(first.code).toBe(0);
    // One registration with a loopback redirect URI (RFC 8252 §7.3), one authorization, one code exchange.
    expect(as!.log.registrations).toHaveLength(1);
    expect(as!.log.registrations[0]!.redirectUris[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(as!.log.authorizations).toHaveLength(1);
    const authorization = as!.log.authorizations[0]!;
    expect(authorization.scope).toBe(SCOPE); // the PRM's scopes_supported
    expect(authorization.resource).toBe(url); // RFC 8707
    expect(authorization.state).toMatch(/^[\w-]{20,}$/);
    expect(readFileSync(opened, "utf8").trim().split("\n")).toHaveLength(1);
    expect(as!.log.tokenRequests.map((t) => t.grantType)).toEqual(["authorization_code"]);

    const second = await runCli(["call", url, "sleep", '{"ms":2}', "--no-task"], { env, timeoutMs: 60_000 });
    expect(second.stdout.trim()).toBe("slept 2 ms");
    expect(second.code).toBe(0);
    expect(second.stderr).not.toContain("needs authorization");
    // `tasks` and `tools` go through the same OAuth session.
    const tools = await runCli(["tools", "list", url, "--json"], { env, timeoutMs: 60_000 });
    expect(tools.code).toBe(0);
    expect((JSON.parse(tools.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain("sleep");
    const tasks = await runCli(["tasks", "list", url, "--json"], { env, timeoutMs: 60_000 });
    expect(tasks.code).toBe(0);
    expect(as!.log.authorizations).toHaveLength(1);
  });

  it("concurrent calls sharing a state directory sign in once: one registration, one browser tab, each prints its own result", async () => {
    const { url, env, opened } = await start();
    // The person takes 4 s in the browser: the other runs arrive while the first waits for them.
    const runs = await Promise.all(
      [1, 2, 3].map((ms) =>
        runCli(["call", url, "sleep", JSON.stringify({ ms }), "--no-task"], {
          env: { ...env, BROWSER_DELAY_MS: "4000" },
          timeoutMs: 90_000,
        }),
      ),
    );
    expect(runs.map((r) => r.stdout.trim())).toEqual(["slept 1 ms", "slept 2 ms", "slept 3 ms"]);
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(as!.log.registrations).toHaveLength(1);
    expect(as!.log.authorizations).toHaveLength(1);
    expect(readFileSync(opened, "utf8").trim().split("\n")).toHaveLength(1);
    expect(runs.filter((r) => r.stderr.includes("Another mcp-tasks run is signing in")).length).toBeGreaterThanOrEqual(1);
  });

  it("auth login keeps the credentials in 0600 files of a 0700 directory; status shows them; logout removes them", async () => {
    const { url, env, stateDir } = await start();
    const login = await runCli(["auth", "login", url], { env, timeoutMs: 60_000 });
    expect(login.stderr).toContain(`Signed in to ${url} at ${as!.issuer}`);
    expect(login.code).toBe(0);
    const oauthDir = join(stateDir, "oauth");
    const files = filesUnder(oauthDir);
    expect(files.map((f) => f.split("/").at(-1)).sort()).toEqual(["client.json", "discovery.json", "tokens.json"]); // the PKCE verifier is gone once used
    for (const file of files) expect(statSync(file).mode & 0o777, file).toBe(0o600);
    for (const dir of [oauthDir, join(files[0]!, "..")]) expect(statSync(dir).mode & 0o777, dir).toBe(0o700);

    const status = await runCli(["auth", "status", url, "--json"], { env });
    expect(status.code).toBe(0);
    const shown = JSON.parse(status.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      target: url,
      signedIn: true,
      issuer: as!.issuer,
      clientId: as!.log.registrations[0]!.clientId,
      scope: SCOPE,
      refreshable: true,
    });
    expect(Date.parse(shown["expiresAt"] as string)).toBeGreaterThan(Date.now());

    const logout = await runCli(["auth", "logout", url], { env });
    expect(logout.stderr).toContain(`Signed out of ${url}`);
    expect(logout.code).toBe(0);
    expect(filesUnder(oauthDir)).toEqual([]);
    const after = await runCli(["auth", "status", url], { env });
    expect(after.stderr).toContain(`Not signed in to ${url}`);
    expect(after.code).toBe(1);
  });

  it("signing in again reuses the registration and its redirect URI's port (an exact-match authorization server accepts it)", async () => {
    const { url, env } = await start();
    expect((await runCli(["auth", "login", url], { env, timeoutMs: 60_000 })).code).toBe(0);
    expect((await runCli(["auth", "login", url], { env, timeoutMs: 60_000 })).code).toBe(0);
    expect(as!.log.registrations).toHaveLength(1);
    expect(as!.log.authorizations.map((a) => a.redirectUri)).toEqual([
      as!.log.registrations[0]!.redirectUris[0],
      as!.log.registrations[0]!.redirectUris[0],
    ]);
  });

  it("an expired access token is refreshed before the request, without asking the person again", async () => {
    const { url, env } = await start({ accessTtlSec: 2 });
    expect((await runCli(["auth", "login", url], { env, timeoutMs: 60_000 })).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const call = await runCli(["call", url, "sleep", '{"ms":3}', "--no-task"], { env, timeoutMs: 60_000 });
    expect(call.stdout.trim()).toBe("slept 3 ms");
    expect(call.code).toBe(0);
    expect(call.stderr).not.toContain("needs authorization");
    expect(as!.log.authorizations).toHaveLength(1);
    expect(as!.log.tokenRequests.map((t) => t.grantType)).toContain("refresh_token");
    // The refresh names the resource too (RFC 8707).
    expect(as!.log.tokenRequests.find((t) => t.grantType === "refresh_token")!.resource).toBe(url);
  });

  it("a refused authorization (the person clicked Deny) is an authentication failure, exit 6", async () => {
    const { url, env } = await start({ deny: true });
    const call = await runCli(["call", url, "sleep", '{"ms":1}', "--no-task"], { env, timeoutMs: 60_000 });
    expect(call.stderr).toContain("The authorization server refused: access_denied");
    expect(call.code).toBe(6);
    expect(as!.log.tokenRequests).toEqual([]);
  });
});

describe("the loopback redirect (RFC 8252 §7.3)", () => {
  it("listens on 127.0.0.1 at /callback and completes only the flow whose state it carries (RFC 6749 §10.12)", async () => {
    const loopback = new LoopbackRedirect();
    await loopback.start();
    try {
      expect(loopback.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const callback = loopback.expect("the-state", 10_000);
      // Another page's redirect (a forged or stale state) is refused and does not end the wait.
      const forged = await fetch(`${loopback.redirectUrl}?code=evil&state=other`);
      expect(forged.status).toBe(400);
      expect((await fetch(new URL("/elsewhere", loopback.redirectUrl))).status).toBe(404);
      const real = await fetch(`${loopback.redirectUrl}?code=the-code&state=the-state`);
      expect(real.status).toBe(200);
      expect(await real.text()).toContain("You can close this window");
      await expect(callback).resolves.toEqual({ code: "the-code" });
    } finally {
      await loopback.close();
    }
    expect(loopback.listening).toBe(false);
  });

  it("an error redirect rejects the flow as an authentication failure, with the server's description", async () => {
    const loopback = new LoopbackRedirect();
    await loopback.start();
    try {
      const callback = loopback.expect("s", 10_000);
      const settled = callback.catch((error: unknown) => error);
      await fetch(`${loopback.redirectUrl}?error=access_denied&error_description=no%20thanks&state=s`);
      const error = await settled;
      expect(error).toBeInstanceOf(AuthenticationError);
      expect((error as Error).message).toBe("The authorization server refused: access_denied (no thanks)");
    } finally {
      await loopback.close();
    }
  });

  it("takes the preferred port when it is free, another when it is not", async () => {
    const first = new LoopbackRedirect();
    await first.start();
    const port = Number(new URL(first.redirectUrl).port);
    const second = new LoopbackRedirect();
    await second.start(port);
    try {
      expect(Number(new URL(second.redirectUrl).port)).not.toBe(port);
    } finally {
      await second.close();
      await first.close();
    }
    const third = new LoopbackRedirect();
    await third.start(port);
    try {
      expect(Number(new URL(third.redirectUrl).port)).toBe(port);
    } finally {
      await third.close();
    }
  });
});
