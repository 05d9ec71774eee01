/**
 * The web view's API within bounds: a body over what it reads is a 413. Over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { webRoutes, type WebOptions } from "../../src/web/web-routes.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { parseSamples, valueOf } from "../support/prometheus.js";
import { webApi } from "../support/web-client.js";

const ADMIN = "admin-token-limits";
const TOKENS = new Map([
  ["tok-alice-limits", "alice"],
  ["tok-bob-limits", "bob"],
  ["tok-carol-limits", "carol"],
]);

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(web: Partial<WebOptions> = {}): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(TOKENS);
  fx = await startHttpServer({ http: { verifier }, routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier, ...web }) });
  return fx;
}

async function rejections(limit: string): Promise<number> {
  return valueOf(parseSamples(await (await fetch(new URL("/metrics", fx!.url))).text()), "mcp_tasks_limit_rejections_total", { limit });
}

describe("web API request bodies", () => {
  it("answers 413 with the web API's error shape to a body over 256 KiB", async () => {
    await start();
    const ids = Array.from({ length: 400 }, (_, i) => `${"x".repeat(700)}-${i}`);
    const answer = await webApi(fx!.url, "/tasks/api/cancel", ADMIN, { method: "POST", body: JSON.stringify({ ids }) });
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({ error: { message: "Request body larger than 262144 bytes" } });
    expect(await rejections("body_bytes")).toBe(1);
  });
});
