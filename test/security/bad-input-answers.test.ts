/**
 * What the fuzzing found, pinned down one case each (T-ERR-1, T-ERR-4): bad input that the SDK
 * path answered with -32603 and an internal message (a validator's dump, "Maximum call stack size
 * exceeded"), and the rule that fixed it — a schema failure is -32602, an unexpected failure is
 * -32603 "Internal error" with its details in the log only.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MAX_ARGUMENT_DEPTH } from "../../src/mcp/handlers/tools-call.js";
import { callToolAsTask, captureLogger, expectRpcError, getTask } from "../support/conformance.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";
import { ACCEPT_ANY, ACCEPT_JSON, answerTo, postRpc } from "../support/rpc-exchange.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";

let env: TwoPrincipals | undefined;
let fixture: Fixture | undefined;
afterEach(async () => {
  await env?.close();
  await fixture?.close();
  env = undefined;
  fixture = undefined;
});

/** Arguments `depth` levels deep (the arguments object itself is the first level), as JSON text. */
const nestedArguments = (depth: number): string => `{"ms":1,"x":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

describe("bad input on the SDK path is the requestor's error (T-ERR-1)", () => {
  it("treats a `constructor` key in params as an unknown param, not as a -32603 schema failure", async () => {
    env = await startTwoPrincipals();
    for (const value of ["1", "null", "{}"]) {
      const lookup = await postRpc(
        env.fx.url,
        `{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"nope","constructor":${value}}}`,
        env.mallory.headers(),
      );
      expect(answerTo(lookup, 1)?.error).toEqual({ code: -32602, message: "Failed to retrieve task result: Task not found" });
      const tools = await postRpc(
        env.fx.url,
        `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"constructor":${value}}}`,
        env.mallory.headers(),
      );
      expect(answerTo(tools, 2)?.result?.["tools"]).toEqual(expect.arrayContaining([expect.objectContaining({ name: "sleep" })]));
    }
  });

  it("answers initialize with invalid params on a live session with -32602 naming the field, not -32603 with the validator's dump", async () => {
    env = await startTwoPrincipals();
    const answer = await postRpc(
      env.fx.url,
      { jsonrpc: "2.0", id: 3, method: "initialize", params: { protocolVersion: 5 } },
      env.mallory.headers(),
    );
    const error = answerTo(answer, 3)?.error;
    expect(error?.code).toBe(-32602);
    expect(error?.message).toMatch(/^Invalid params for initialize: .*protocolVersion/);
  });

  it(`refuses tools/call arguments nested more than ${MAX_ARGUMENT_DEPTH} levels deep with -32602, on the JSON and the SSE path, and accepts ${MAX_ARGUMENT_DEPTH}`, async () => {
    env = await startTwoPrincipals();
    for (const accept of [ACCEPT_JSON, ACCEPT_ANY]) {
      for (const task of [',"task":{}', ""]) {
        if (accept === ACCEPT_JSON && task === "") continue; // a plain call needs the SSE path
        const body = (depth: number) =>
          `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sleep","arguments":${nestedArguments(depth)}${task}}}`;
        const deep = await postRpc(env.fx.url, body(200_000), env.mallory.headers(), { accept });
        expect(answerTo(deep, 4)?.error).toEqual({
          code: -32602,
          message: `Invalid params: arguments nest more than ${MAX_ARGUMENT_DEPTH} levels deep`,
        });
        const over = await postRpc(env.fx.url, body(MAX_ARGUMENT_DEPTH + 1), env.mallory.headers(), { accept });
        expect(answerTo(over, 4)?.error?.code).toBe(-32602);
        const atLimit = await postRpc(env.fx.url, body(MAX_ARGUMENT_DEPTH), env.mallory.headers(), { accept });
        expect(answerTo(atLimit, 4)?.result).toBeDefined();
      }
    }
  });
});

describe("an unexpected failure is -32603 'Internal error', details in the log only (T-ERR-4)", () => {
  it("answers tasks/get when the store fails with exactly 'Internal error', and logs the store's own error", async () => {
    const logger = captureLogger();
    fixture = await inMemoryFixture({ logger });
    const taskId = (await callToolAsTask(fixture.client, "sleep", { ms: 600_000 })).task.taskId;
    await fixture.app.engine.store.close();
    const error = await expectRpcError(getTask(fixture.client, taskId), -32603, "Internal error");
    expect(error.data).toBeUndefined();
    const logged = await logger.until((e) => e.level === "error" && e.obj["method"] === "tasks/get");
    expect(String((logged.obj["err"] as Error).message)).toMatch(/closed/);
  });
});
