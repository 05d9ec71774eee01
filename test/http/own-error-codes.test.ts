/**
 * Our own error codes in each era, from one table of cases: the rate limit, a missing bearer token
 * and the server unable to take new work keep their HTTP status and `data` in both eras; the code
 * is 2025-11-25's own (-32029, -32001, -32003) there, and under 2026-07-28 one outside the ranges
 * the revision reserves (X-ERR-6: -32020..-32099 are the spec's, -32000..-32019 not for new
 * implementations) — src/mcp/own-error-codes.ts. Real HTTP, the SDK client for 2025-11-25 and raw
 * stateless POSTs for 2026-07-28.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { OWN_ERROR_CODES, ownErrorOf, type OwnErrorName } from "../../src/mcp/own-error-codes.js";
import { callToolAsTask, getTask, rpcError } from "../support/conformance.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { isTerminal, pollTask, statelessRpc } from "../support/stateless-client.js";

const TOKEN = "tok-alice-31d7";
const verifier = staticTokenVerifier(new Map([[TOKEN, "alice"]]));

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** What a requestor of one era sees of a refusal. */
interface Refusal {
  code: number;
  data?: unknown;
  /** The HTTP status, where the era's requestor sees one. */
  status?: number;
}

interface Era {
  id: "2025-11-25" | "2026-07-28";
  getTask(taskId: string): Promise<Refusal>;
  createTask(): Promise<Refusal>;
  /** A first request without a bearer token. */
  unauthenticated(): Promise<Refusal>;
}

const ERAS: Era[] = [
  {
    id: "2025-11-25",
    async getTask(taskId) {
      const client = await fx!.connect({ token: TOKEN });
      const error = await rpcError(getTask(client.client, taskId));
      return { code: error.code, data: error.data };
    },
    async createTask() {
      const client = await fx!.connect({ token: TOKEN });
      const error = await rpcError(callToolAsTask(client.client, "sleep", { ms: 10 }));
      return { code: error.code, data: error.data };
    },
    async unauthenticated() {
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      };
      const answer = await rawPost(fx!.url, initialize);
      const error = (answer.json as { error: { code: number; data?: unknown } }).error;
      return { code: error.code, status: answer.status };
    },
  },
  {
    id: "2026-07-28",
    async getTask(taskId) {
      const { status, body } = await statelessRpc(fx!.url, "tasks/get", { taskId }, { token: TOKEN });
      return { code: body.error!.code, data: body.error!.data, status };
    },
    async createTask() {
      const { status, body } = await statelessRpc(fx!.url, "tools/call", { name: "sleep", arguments: { ms: 10 } }, { token: TOKEN });
      return { code: body.error!.code, data: body.error!.data, status };
    },
    async unauthenticated() {
      const { status, body } = await statelessRpc(fx!.url, "tools/list", {});
      return { code: body.error!.code, status };
    },
  },
];

interface Case {
  name: OwnErrorName;
  what: string;
  refusal(era: Era): Promise<Refusal>;
  data?: unknown;
}

const CASES: Case[] = [
  {
    name: "rateLimited",
    what: "tasks/get of unknown ids past the failed-lookup guard",
    async refusal(era) {
      fx = await startHttpServer({ app: { rateLimit: "off", failedLookups: { perOwner: 2 } }, http: { verifier } });
      for (let i = 0; i < 2; i++) await era.getTask(`unknown-${i}`);
      return era.getTask("unknown-last");
    },
    data: expect.objectContaining({ name: "failed_lookups", retryAfterMs: expect.any(Number) }),
  },
  {
    name: "unauthorized",
    what: "a request without a bearer token",
    async refusal(era) {
      fx = await startHttpServer({ http: { verifier } });
      return era.unauthenticated();
    },
  },
  {
    name: "unavailable",
    what: "a new task while the server drains",
    async refusal(era) {
      fx = await startHttpServer({ http: { verifier } });
      await fx.app.drain(60_000);
      return era.createTask();
    },
    data: expect.objectContaining({ reason: "draining", retryAfterMs: expect.any(Number) }),
  },
];

describe.each(ERAS)("our own error codes under $id", (era) => {
  it.each(CASES)("$what is refused with the era's code for $name", async (c) => {
    const refusal = await c.refusal(era);
    const row = OWN_ERROR_CODES[c.name];
    expect(refusal.code).toBe(row.codes[era.id]);
    expect(ownErrorOf(refusal.code)).toBe(c.name);
    if (c.data !== undefined) expect(refusal.data).toEqual(c.data);
    if (refusal.status !== undefined && (era.id === "2026-07-28" || c.name === "unauthorized")) expect(refusal.status).toBe(row.status);
  });
});

describe("the 2026-07-28 codes (X-ERR-6)", () => {
  it("lie outside the range the revision reserves and the one it keeps from new implementations (-32000..-32099)", () => {
    for (const row of Object.values(OWN_ERROR_CODES)) {
      const code = row.codes["2026-07-28"];
      expect(code < -32099 || code > -32000).toBe(true);
      // and outside JSON-RPC's own reserved block
      expect(code < -32768 || code > -32000).toBe(true);
    }
  });

  it("are ours only: a tool that throws -32001 itself has it answered as it is", async () => {
    fx = await startHttpServer();
    const created = await statelessRpc(fx.url, "tools/call", { name: "throw", arguments: { code: -32001, message: "Quota exceeded" } });
    const taskId = String(created.body.result?.["taskId"]);
    const ended = await pollTask(fx.url, taskId, isTerminal);
    expect(ended["error"]).toEqual({ code: -32001, message: "Quota exceeded" });
  });

  it("leave 2025-11-25's codes as they were", () => {
    expect(Object.fromEntries(Object.entries(OWN_ERROR_CODES).map(([name, row]) => [name, row.codes["2025-11-25"]]))).toEqual({
      rateLimited: -32029,
      unauthorized: -32001,
      unavailable: -32003,
    });
  });
});
