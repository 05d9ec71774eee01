/**
 * The failed-lookup guard (T-SEC-4) on a shared address, in both eras from one table of cases,
 * over real Streamable HTTP: principals behind one address (NAT, a proxy) are counted each by
 * itself, so what some of them do never refuses another; a principal over its own allowance is
 * refused every id it does not own but still reaches its own tasks; callers without a principal
 * are counted by their address. Default limits (20 failed lookups a minute, a 60 s cool-down).
 */
import { randomUUID } from "node:crypto";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { OWN_ERROR_CODES } from "../../src/mcp/own-error-codes.js";
import { callToolAsTask, cancelTask, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpClient, type HttpServerFixture } from "../support/http-fixture.js";
import { statelessRpc } from "../support/stateless-client.js";

const NOT_FOUND = -32602;
const ALLOWANCE = 20;
const TOKENS = new Map(Array.from({ length: 6 }, (_, i) => [`tok-user${i}-${randomUUID()}`, `user${i}`] as const));
const [tokenA = "", tokenB = "", tokenC = "", tokenD = "", tokenE = "", tokenF = ""] = TOKENS.keys();

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** What a requestor of one era sees: the task's status (2026-07-28's cancel: its acknowledgement), or the error's code. */
type Answer = { status: string } | { code: number };

/** One caller of an era: a principal's token, or none (anonymous). */
interface EraCaller {
  /** Starts a task that runs for a minute; its id. */
  start(): Promise<string>;
  get(taskId: string): Promise<Answer>;
  cancel(taskId: string): Promise<Answer>;
  /** Waits for a task's outcome where the era has such a request (2025-11-25 `tasks/result`). */
  result?(taskId: string): Promise<Answer>;
}

interface Era {
  id: "2025-11-25" | "2026-07-28";
  caller(token?: string): Promise<EraCaller>;
}

async function answerOf(request: Promise<{ status?: string; content?: unknown }>): Promise<Answer> {
  try {
    const answer = await request;
    return { status: answer.status ?? "answered" };
  } catch (error) {
    if (error instanceof McpError) return { code: error.code };
    throw error;
  }
}

const ERAS: Era[] = [
  {
    id: "2025-11-25",
    async caller(token) {
      const { client }: HttpClient = await fx!.connect(token === undefined ? {} : { token });
      return {
        start: async () => (await callToolAsTask(client, "sleep", { ms: 60_000 })).task.taskId,
        get: (taskId) => answerOf(getTask(client, taskId)),
        cancel: (taskId) => answerOf(cancelTask(client, taskId)),
        result: (taskId) => answerOf(taskResult(client, taskId)),
      };
    },
  },
  {
    id: "2026-07-28",
    async caller(token) {
      const options = token === undefined ? {} : { token };
      const call = async (method: string, params: Record<string, unknown>): Promise<Answer> => {
        const { body } = await statelessRpc(fx!.url, method, params, options);
        return body.error ? { code: body.error.code } : { status: String(body.result?.["status"] ?? "acknowledged") };
      };
      return {
        async start() {
          const { body } = await statelessRpc(fx!.url, "tools/call", { name: "sleep", arguments: { ms: 60_000 } }, options);
          const taskId = body.result?.["taskId"];
          if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(body)}`);
          return taskId;
        },
        get: (taskId) => call("tasks/get", { taskId }),
        cancel: (taskId) => call("tasks/cancel", { taskId }),
      };
    },
  },
];

/** Lookups of ids that were never made, each answered "not found" while within the allowance. */
async function failLookups(caller: EraCaller, n: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < n; i++) answers.push(await caller.get(randomUUID()));
  return answers;
}

describe.each(ERAS)("the failed-lookup guard on a shared address under $id (T-SEC-4)", (era) => {
  const rateLimited = { code: OWN_ERROR_CODES.rateLimited.codes[era.id] };

  async function start(auth: boolean): Promise<void> {
    fx = await startHttpServer({ app: { rateLimit: "off" }, http: auth ? { verifier: staticTokenVerifier(TOKENS) } : {} });
  }

  it("counts principals behind one address each by itself: five at their allowance leave every one of them, and a sixth, answered", async () => {
    await start(true);
    const five = await Promise.all([tokenA, tokenB, tokenC, tokenD, tokenE].map((token) => era.caller(token)));
    const own: string[] = [];
    for (const principal of five) own.push(await principal.start());
    for (const principal of five)
      expect(await failLookups(principal, ALLOWANCE)).toEqual(Array<Answer>(ALLOWANCE).fill({ code: NOT_FOUND }));

    const sixth = await era.caller(tokenF);
    expect(await sixth.get(randomUUID())).toEqual({ code: NOT_FOUND });
    for (const [i, principal] of five.entries()) expect(await principal.get(own[i]!)).toEqual({ status: "working" });
  });

  it("refuses a principal over its allowance every id it does not own, existing or not, and answers its lookups of its own tasks", async () => {
    await start(true);
    const prober = await era.caller(tokenA);
    const neighbour = await era.caller(tokenB);
    const own = await prober.start();
    const ownDone = await prober.start();
    const foreign = await neighbour.start();
    expect(await failLookups(prober, ALLOWANCE + 1)).toEqual([...Array<Answer>(ALLOWANCE).fill({ code: NOT_FOUND }), rateLimited]);

    expect(await prober.get(foreign)).toEqual(rateLimited);
    expect(await prober.cancel(foreign)).toEqual(rateLimited);
    expect(await prober.get(randomUUID())).toEqual(rateLimited);
    expect(await prober.get(own)).toEqual({ status: "working" });
    expect(await prober.cancel(ownDone)).not.toEqual(rateLimited);
    expect(await prober.get(ownDone)).toEqual({ status: "cancelled" });
    if (prober.result) expect(await prober.result(ownDone)).toEqual({ code: -32800 }); // a cancelled task's tasks/result: answered, not refused
    // The neighbour on the same address was never refused, and its task was left alone.
    expect(await neighbour.get(foreign)).toEqual({ status: "working" });
    expect(await neighbour.get(randomUUID())).toEqual({ code: NOT_FOUND });
  });

  it("counts callers without a principal by their address: past the allowance every one of them is refused, an existing task included", async () => {
    await start(false);
    const first = await era.caller();
    const second = await era.caller();
    const existing = await first.start();
    expect(await failLookups(first, ALLOWANCE + 1)).toEqual([...Array<Answer>(ALLOWANCE).fill({ code: NOT_FOUND }), rateLimited]);
    // A task bound to nobody is reached by its id alone: finding it is what an enumeration looks for.
    expect(await first.get(existing)).toEqual(rateLimited);
    expect(await second.get(existing)).toEqual(rateLimited);
  });
});

describe("the failed-lookup guard under session binding (2025-11-25, T-SEC-4)", () => {
  it("counts the sessions of one address together, and still answers each session's lookups of its own tasks", async () => {
    fx = await startHttpServer({ app: { rateLimit: "off", bind: "session" } });
    const [prober, other] = await Promise.all([ERAS[0]!.caller(), ERAS[0]!.caller()]);
    const own = await other.start();
    expect(await failLookups(prober, ALLOWANCE + 1)).toEqual([...Array<Answer>(ALLOWANCE).fill({ code: NOT_FOUND }), { code: -32029 }]);
    expect(await other.get(randomUUID())).toEqual({ code: -32029 });
    expect(await other.get(own)).toEqual({ status: "working" });
    expect(await other.cancel(own)).toEqual({ status: "cancelled" });
  });
});
