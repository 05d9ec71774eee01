/**
 * The HTTP limits on real `serve` and `gateway` processes: the timeout flags reach the server
 * (slow headers and bodies cut with 408, idle keep-alive connections closed), a headers timeout
 * over the request timeout is a usage error, and a gateway's front closes the connection of a
 * request it refused without reading its body.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeCommand } from "../gateway/gateway-fixture.js";
import { CliProcess, killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { flood, rawConnection, requestHead, trickle } from "../support/raw-socket.js";

const COUNTING_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/counting-upstream.mjs");
const HUGE = 50 * 1024 * 1024;

let dir: string | undefined;
afterEach(async () => {
  await killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function portOf(cli: CliProcess): Promise<number> {
  return Number(new URL(await cli.url(30_000)).port);
}

describe("serve's HTTP timeout flags", { timeout: 60_000 }, () => {
  it("--headers-timeout, --request-timeout and --keep-alive-timeout bound a connection's slow headers, slow body and idle keep-alive", async () => {
    const cli = CliProcess.spawn([
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--headers-timeout",
      "300",
      "--request-timeout",
      "800",
      "--keep-alive-timeout",
      "300",
    ]);
    const port = await portOf(cli);
    const [headers, body, idle] = await Promise.all([
      rawConnection(port, (socket) => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
        trickle(socket, "X-Slow: a\r\n", 50);
      }),
      rawConnection(port, (socket) => {
        socket.write(requestHead("POST", "/mcp", port, { "Content-Type": "application/json", "Content-Length": 10_000 }));
        trickle(socket, " ", 50);
      }),
      rawConnection(port, (socket) => socket.write(requestHead("GET", "/healthz", port))),
    ]);
    expect(headers.status).toBe(408);
    expect(headers.closedAfterMs).toBeLessThan(800);
    expect(body.status).toBe(408);
    expect(body.closedAfterMs).toBeGreaterThanOrEqual(750);
    expect(body.closedAfterMs).toBeLessThan(2_500);
    // Answered, then closed by the server once idle for the keep-alive timeout (not the 5 s default).
    expect(idle.status).toBe(200);
    expect(idle.closedAfterMs).toBeLessThan(2_500);
  });

  it("refuses a --headers-timeout longer than --request-timeout as a usage error (exit 2)", async () => {
    const run = await runCli(
      ["serve", "--demo", "--store", "memory", "--port", "0", "--headers-timeout", "2000", "--request-timeout", "1000"],
      { timeoutMs: 40_000 },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--headers-timeout (2000) must not exceed --request-timeout (1000)");
  });
});

describe("a gateway's front", { timeout: 60_000 }, () => {
  it("answers 401 to a request without a token and closes the connection without reading its 50 MiB body", async () => {
    dir = mkdtempSync(join(tmpdir(), "mcp-tasks-http-limits-"));
    const tokens = join(dir, "tokens.json");
    writeFileSync(tokens, JSON.stringify({ "tok-alice-gw": "alice" }));
    const cli = CliProcess.spawn([
      "gateway",
      "--port",
      "0",
      "--store",
      "memory",
      "--auth-tokens",
      tokens,
      "--upstream-stdio",
      nodeCommand(COUNTING_UPSTREAM),
    ]);
    const port = await portOf(cli);
    const outcome = await rawConnection(port, (socket) => {
      socket.write(requestHead("POST", "/mcp", port, { "Content-Type": "application/json", "Content-Length": HUGE }));
      // The body follows once the answer has arrived (or 100 ms passed). A client still writing
      // when the server closes gets EPIPE, and Node then drops the socket before reading what the
      // server had sent: the 401 would be lost on the client's side, not the server's. A server
      // that read the body first, or kept the connection to drain it, still takes all 50 MiB.
      let started = false;
      const start = (): void => {
        if (started) return;
        started = true;
        flood(socket, HUGE, "raw");
      };
      socket.once("data", start);
      setTimeout(start, 100).unref();
    });
    expect(outcome.status).toBe(401);
    expect(outcome.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(outcome.closedAfterMs).toBeLessThan(3_000);
    expect(outcome.bytesWritten).toBeLessThan(HUGE / 2);
  });
});
