/** /healthz, /readyz, /metrics access, request ids and the route table's answers for unknown paths and methods. */
import { afterEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const at = (path: string): URL => {
  if (!fx) throw new Error("no server");
  return new URL(path, fx.url);
};

describe("operations endpoints", () => {
  it("/healthz answers 200 without credentials", async () => {
    fx = await startHttpServer();
    const response = await fetch(at("/healthz"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
  });

  it("/readyz answers 200 while the store answers", async () => {
    fx = await startHttpServer();
    const response = await fetch(at("/readyz"));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ready" });
  });

  it("/readyz answers 503 once the store is unreachable, without its error details", async () => {
    fx = await startHttpServer();
    await fx.app.engine.store.close();
    const response = await fetch(at("/readyz"));
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "unavailable", reason: "the task store is not reachable" });
  });

  it("/readyz answers 503 'draining' once the server drains, while /healthz stays 200", async () => {
    fx = await startHttpServer();
    await fx.app.drain(0);
    const response = await fetch(at("/readyz"));
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "draining", reason: "the server is shutting down and takes no new tasks" });
    expect((await fetch(at("/healthz"))).status).toBe(200);
  });

  it("/metrics is open by default, in Prometheus text format", async () => {
    fx = await startHttpServer();
    const response = await fetch(at("/metrics"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await response.text()).toContain("# TYPE mcp_tasks_created_total counter");
  });

  it("/metrics with a metrics token answers 401 without it and 200 with it", async () => {
    fx = await startHttpServer({ http: { metricsToken: "scrape-secret" } });
    const refused = await fetch(at("/metrics"));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await fetch(at("/metrics"), { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(at("/metrics"), { headers: { authorization: "Bearer scrape-secret" } })).status).toBe(200);
  });

  it("answers 405 with Allow for a method a route does not serve", async () => {
    fx = await startHttpServer();
    const response = await fetch(at("/healthz"), { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answers 404 for an unknown path", async () => {
    fx = await startHttpServer();
    expect((await fetch(at("/nope"))).status).toBe(404);
  });

  it("gives every response an x-request-id, keeping a well-formed one the caller sent", async () => {
    fx = await startHttpServer();
    const fresh = await fetch(at("/healthz"));
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await fetch(at("/healthz"), { headers: { "x-request-id": "edge-42.a" } });
    expect(kept.headers.get("x-request-id")).toBe("edge-42.a");
    const replaced = await fetch(at("/healthz"), { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
