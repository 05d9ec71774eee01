/**
 * The attack suite's server (test/security): the demo tools over real Streamable HTTP with bearer
 * tokens for two principals, alice (the victim) and mallory (the attacker), the web view, and a
 * real SQLite file as the store unless a test brings its own.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { HttpOptions } from "../../src/http/http-server.js";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { startHttpServer, type HttpClient, type HttpServerFixture } from "./http-fixture.js";

export const ALICE = { token: "tok-alice-5f0c9d1e", principal: "alice", owner: "local|alice" } as const;
export const MALLORY = { token: "tok-mallory-a83b27c4", principal: "mallory", owner: "local|mallory" } as const;
/** The web view's admin credential; the attacks never use it (they are about what a principal can reach). */
export const WEB_ADMIN_TOKEN = "web-admin-token-7d41e0b2c9";

/**
 * Server options that switch the rate limits (T-SEC-4) off: the operation rate and the failed-lookup
 * guard. Enumeration and fuzzing
 * make thousands of failed lookups on purpose: what they prove (every answer is the same
 * "not found", nothing crashes) must not be masked by -32029 refusals. Only a test that is about
 * the limiter may leave it on.
 */
export const RATE_LIMITS_OFF: Partial<TaskServerOptions> = { rateLimit: "off", failedLookups: "off" };

export interface TwoPrincipalsOptions {
  /** App options beyond the defaults (store, page size, …); merged over {@link RATE_LIMITS_OFF}. */
  app?: Partial<TaskServerOptions>;
  /** HTTP options beyond the verifier (e.g. `sessions: "shared"`). */
  http?: HttpOptions;
}

export interface TwoPrincipals {
  fx: HttpServerFixture;
  alice: HttpClient;
  mallory: HttpClient;
  close(): Promise<void>;
}

/** Starts the server and connects alice and mallory, each with their own token and session. */
export async function startTwoPrincipals(options: TwoPrincipalsOptions = {}): Promise<TwoPrincipals> {
  const verifier = staticTokenVerifier(
    new Map([
      [ALICE.token, ALICE.principal],
      [MALLORY.token, MALLORY.principal],
    ]),
  );
  const dir = options.app?.store ? null : mkdtempSync(join(tmpdir(), "mcp-tasks-security-"));
  const fx = await startHttpServer({
    app: { ...RATE_LIMITS_OFF, ...(dir && { store: sqliteStore(join(dir, "tasks.db")) }), ...options.app },
    http: { ...options.http, verifier },
    routes: (app) => webRoutes(app, { adminTokens: [WEB_ADMIN_TOKEN], verifier, feed: { coalesceMs: 5, countsEveryMs: 10 } }),
  });
  const alice = await fx.connect({ token: ALICE.token });
  const mallory = await fx.connect({ token: MALLORY.token });
  return {
    fx,
    alice,
    mallory,
    async close() {
      await fx.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
