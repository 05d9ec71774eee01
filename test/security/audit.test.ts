/**
 * The audit log (T-SEC-5) as `serve` writes it: the real pino logger of the CLI, into a stream.
 * Every line about a task says who (owner), which task, which JSON-RPC method and from where
 * (peer); none carries a bearer token, and tool arguments only when `auditArguments` asks.
 */
import { Writable } from "node:stream";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/cli/logger.js";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const TOKEN = "tok-alice-audit-0b7f3e1a";
const SECRET = "the-question-nobody-may-read-4d2c";

/** A pino destination keeping every line, parsed. */
function capture(): { stream: Writable; raw: string[]; lines(): Record<string, unknown>[] } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(
        ...chunk
          .toString("utf8")
          .split("\n")
          .filter((line) => line !== ""),
      );
      done();
    },
  });
  return { stream, raw, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

async function start(log: ReturnType<typeof capture>, app: { auditArguments?: boolean } = {}): Promise<HttpServerFixture> {
  fx = await startHttpServer({
    app: { logger: createLogger("info", log.stream), rateLimit: { perSecond: 1, burst: 12 }, ...app },
    http: { verifier: staticTokenVerifier(new Map([[TOKEN, "alice"]])) },
  });
  return fx;
}

/** Drives one of each audited event through alice's session. */
async function everyEvent(fx: HttpServerFixture): Promise<void> {
  const alice = await fx.connect({ token: TOKEN });
  alice.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "blue" } }));
  const asked = await callToolAsTask(alice.client, "ask", { question: SECRET });
  await taskResult(alice.client, asked.task.taskId);
  const doomed = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
  await cancelTask(alice.client, doomed.task.taskId);
  await expectRpcError(getTask(alice.client, "00000000-0000-4000-8000-000000000000"), -32602);
  // Over the rate limit: the refusal is audited as limit_hit.
  for (;;) {
    const error = await getTask(alice.client, asked.task.taskId).then(
      () => null,
      (e: unknown) => e,
    );
    if (error) break;
  }
}

describe("T-SEC-5: audit lines", () => {
  it("carry owner, taskId, the method or operation, and peer on every line about a task", async () => {
    const log = capture();
    await everyEvent(await start(log));
    const audit = log.lines().filter((line) => typeof line["audit"] === "string");
    const byKind = new Map(audit.map((line) => [line["audit"], line]));
    // Lines about what a task does name its request's method; lines about an operation on it
    // name the engine's operation (the same in every protocol era).
    const expected: Record<string, Record<string, string>> = {
      created: { method: "tools/call" },
      input_requested: { method: "elicitation/create" },
      input_answered: { method: "elicitation/create" },
      completed: { method: "tools/call" },
      retrieved: { operation: "result" },
      cancelled: { operation: "cancel" },
      lookup_denied: { operation: "get" },
      limit_hit: { operation: "get" },
    };
    for (const [kind, label] of Object.entries(expected)) {
      expect(byKind.get(kind), `an audit line "${kind}"`).toMatchObject({ owner: "local|alice", ...label, peer: "127.0.0.1" });
      expect(byKind.get(kind)).toHaveProperty("taskId");
    }
    expect(byKind.get("limit_hit")).toMatchObject({ limit: "task_operations" });
  });

  it("record a running task failed by a clean shutdown as interrupted, with its creator", async () => {
    const log = capture();
    const server = await start(log);
    const alice = await server.connect({ token: TOKEN });
    const { task } = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await server.app.close();
    expect(log.lines().find((line) => line["audit"] === "interrupted")).toMatchObject({
      taskId: task.taskId,
      owner: "local|alice",
      method: "tools/call",
      peer: "127.0.0.1",
    });
  });

  it("never carry the bearer token or the tool's arguments", async () => {
    const log = capture();
    await everyEvent(await start(log));
    expect(log.raw.length).toBeGreaterThan(8);
    for (const line of log.raw) {
      expect(line).not.toContain(TOKEN);
      expect(line).not.toContain(SECRET);
    }
  });

  it("carry the request's arguments on the created line when auditArguments is on", async () => {
    const log = capture();
    const server = await start(log, { auditArguments: true });
    const alice = await server.connect({ token: TOKEN });
    await callToolAsTask(alice.client, "sleep", { ms: 60_000, steps: 3 });
    const created = log.lines().find((line) => line["audit"] === "created");
    expect(created).toMatchObject({ request: { name: "sleep", arguments: { ms: 60_000, steps: 3 } } });
  });

  it("have authorization headers and tokens redacted wherever a line would carry them", () => {
    const log = capture();
    const logger = createLogger("info", log.stream);
    logger.error({ req: { headers: { authorization: `Bearer ${TOKEN}`, "x-request-id": "r1" } } }, "failed");
    logger.error({ headers: { authorization: `Bearer ${TOKEN}` } }, "failed");
    logger.warn({ token: TOKEN }, "refused");
    expect(log.raw.join("\n")).not.toContain(TOKEN);
    expect(log.lines()[0]).toMatchObject({ req: { headers: { authorization: "[redacted]", "x-request-id": "r1" } } });
  });

  it("redact a credential one level down in any field, and the cookie header, leaving the rest of the line as it was", () => {
    const log = capture();
    const logger = createLogger("info", log.stream);
    logger.warn(
      {
        upstream: { url: "http://up/mcp", accessToken: TOKEN, token: TOKEN },
        headers: { cookie: `sid=${TOKEN}`, accept: "text/event-stream" },
        taskId: "t1",
      },
      "refused",
    );
    expect(log.raw.join("\n")).not.toContain(TOKEN);
    expect(log.lines()[0]).toMatchObject({
      upstream: { url: "http://up/mcp", accessToken: "[redacted]", token: "[redacted]" },
      headers: { cookie: "[redacted]", accept: "text/event-stream" },
      taskId: "t1",
    });
  });

  it("redact the headers an error carries, and still log it as an error of its class with its message and stack", () => {
    const log = capture();
    const logger = createLogger("info", log.stream);
    class UpstreamError extends Error {}
    const error = Object.assign(new UpstreamError("upstream refused"), {
      headers: { authorization: `Bearer ${TOKEN}`, "retry-after": "5" },
    });
    logger.error({ err: error }, "call failed");
    expect(log.raw.join("\n")).not.toContain(TOKEN);
    const line = log.lines()[0] as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({
      type: "UpstreamError",
      message: "upstream refused",
      headers: { authorization: "[redacted]", "retry-after": "5" },
    });
    expect(line.err["stack"]).toContain("upstream refused");
  });

  it("never write to the objects they were given", () => {
    const logger = createLogger("info", capture().stream);
    const headers = { authorization: `Bearer ${TOKEN}` };
    const request = { headers, token: TOKEN };
    logger.error({ req: request, token: TOKEN }, "failed");
    expect(request).toEqual({ headers: { authorization: `Bearer ${TOKEN}` }, token: TOKEN });
    expect(request.headers).toBe(headers);
  });
});
