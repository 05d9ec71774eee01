/** `mcp-tasks serve` with the web view, metrics and health flags, as a real process. */
import { afterEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";

afterEach(killAll);

const ADMIN = "cli-admin-token-4f1d";

describe("mcp-tasks serve: web view and operations flags", { timeout: 60_000 }, () => {
  it("documents --no-web, --admin-token, --redact and --metrics-token in serve --help", async () => {
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const option of ["--no-web", "--admin-token <token>", "--redact <fields>", "--metrics-token <token>", "MCP_TASKS_ADMIN_TOKEN"]) {
      expect(help.stdout).toContain(option);
    }
  });

  it("serves the web view with --admin-token, logs its URL, and never logs the token", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--admin-token", ADMIN]);
    const url = await server.url();
    const listening = server.stderr.items.find((line) => line["url"] === url);
    expect(listening?.["web"]).toBe(new URL("/tasks", url).href);
    expect((await fetch(new URL("/tasks", url))).status).toBe(200);
    expect((await fetch(new URL("/tasks/api/session", url))).status).toBe(401);
    const session = await fetch(new URL("/tasks/api/session", url), { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(await session.json()).toMatchObject({ principal: "admin", admin: true });
    expect((await fetch(new URL("/healthz", url))).status).toBe(200);
    expect(await (await fetch(new URL("/metrics", url))).text()).toContain("process_cpu_user_seconds_total");
    await server.kill("SIGTERM");
    expect(server.stderrText).not.toContain(ADMIN);
  });

  it("without any credential prints a sign-in link once (stderr, not a log line) whose token opens the view as admin; / leads to /tasks", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]);
    const url = await server.url();
    const line = await server.stderr.waitFor((l) => l.raw.startsWith("Web view: "), "the sign-in link", 10_000);
    const link = /Web view: open (\S+)#token=([A-Za-z0-9_-]{32,}) to sign in/.exec(line.raw);
    expect(link?.[1]).toBe(new URL("/tasks", url).href);
    const token = link![2]!;
    const session = await fetch(new URL("/tasks/api/session", url), { headers: { authorization: `Bearer ${token}` } });
    expect(await session.json()).toMatchObject({ principal: "admin", admin: true });
    expect(server.stderr.items.filter((line) => line.raw.includes(token))).toHaveLength(1);
    expect(server.stderr.items.some((line) => typeof line["msg"] === "string" && line.raw.includes(token))).toBe(false);
    const root = await fetch(new URL("/", url), { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/tasks");
  });

  it("prints no sign-in link when --admin-token is given", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--admin-token", ADMIN]);
    await server.url();
    expect(server.stderrText).not.toContain("#token=");
  });

  it("--no-web switches the view off; health and metrics stay", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--no-web"]);
    const url = await server.url();
    expect((await fetch(new URL("/tasks", url))).status).toBe(404);
    expect((await fetch(new URL("/tasks/api/session", url))).status).toBe(404);
    expect((await fetch(new URL("/readyz", url))).status).toBe(200);
    expect((await fetch(new URL("/metrics", url))).status).toBe(200);
  });

  it("--metrics-token protects /metrics", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--metrics-token", "scrape"]);
    const url = await server.url();
    expect((await fetch(new URL("/metrics", url))).status).toBe(401);
    expect((await fetch(new URL("/metrics", url), { headers: { authorization: "Bearer scrape" } })).status).toBe(200);
  });

  it("refuses an unknown --redact field with a clear message", async () => {
    const run = await runCli(["serve", "--demo", "--store", "memory", "--port", "0", "--redact", "arguments,secrets"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/--redact.*arguments, results, inputs or "all", not "secrets"/s);
  });

  it.each(["serve", "gateway"])("%s refuses a --trace-url without {traceId} with exit 2 and says what it needs", async (command) => {
    const source = command === "serve" ? ["--demo"] : ["--upstream-url", "http://127.0.0.1:9/mcp"];
    const run = await runCli([command, ...source, "--store", "memory", "--port", "0", "--trace-url", "https://tracing.example/trace/"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("must contain {traceId}");
  });
});
