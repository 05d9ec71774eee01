/**
 * Attack suite, the input_required answer path (T-SEC-3, T-INPUT): alice's task asks her a
 * question (elicitation) on her tasks/result stream; mallory, who is assumed to know the JSON-RPC
 * id of that request (the worst case), POSTs a response with that id on her own session. It must
 * not reach alice's task: the task stays input_required, and alice's own answer is the one the
 * task gets. Run with local sessions (one node) and with shared sessions (cluster mode, where
 * responses are routed between nodes by id, src/http/shared-sessions/reply-router.ts).
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema, type ElicitResult, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { ReplyRouter } from "../../src/http/shared-sessions/reply-router.js";
import { silentLogger } from "../../src/core/logger.js";
import { callToolAsTask, deferred, getTask, taskResult } from "../support/conformance.js";
import { postRpc } from "../support/rpc-exchange.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";

let env: TwoPrincipals | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

describe.each(["local", "shared"] as const)("the input_required answer path with %s sessions (T-SEC-3)", (sessions) => {
  /** Alice's ask task with its question delivered to her and not yet answered; her answer is held by the test. */
  async function aliceIsAsked() {
    env = await startTwoPrincipals({ http: { sessions } });
    const { alice } = env;
    const asked = deferred<void>();
    const answer = deferred<ElicitResult>();
    alice.client.setRequestHandler(ElicitRequestSchema, async () => {
      asked.resolve();
      return answer.promise;
    });
    const taskId = (await callToolAsTask(alice.client, "ask", { question: "what is your PIN?" })).task.taskId;
    const result = taskResult(alice.client, taskId);
    await asked.promise;
    const request = alice.received.items.find((r) => r.message.method === "elicitation/create")?.message;
    if (request?.id === undefined) throw new Error("alice received no elicitation/create request");
    return { env, taskId, requestId: request.id, answer, result };
  }

  it("drops mallory's response carrying the id of alice's input request: alice's task stays input_required and takes alice's answer", async () => {
    const { env, taskId, requestId, answer, result } = await aliceIsAsked();
    const forged = { jsonrpc: "2.0", id: requestId, result: { action: "accept", content: { answer: "mallory's answer" } } };
    const posted = await postRpc(env.fx.url, forged, env.mallory.headers());
    expect(posted.status).toBeLessThan(500);

    expect((await getTask(env.alice.client, taskId)).status).toBe("input_required");
    answer.resolve({ action: "accept", content: { answer: "alice's answer" } });
    expect((await result).content).toEqual([{ type: "text", text: "answer: alice's answer" }]);
  });

  it("drops a forged error response too: alice's task is not failed by mallory", async () => {
    const { env, taskId, requestId, answer, result } = await aliceIsAsked();
    const forged = { jsonrpc: "2.0", id: requestId, error: { code: -32000, message: "mallory says no" } };
    await postRpc(env.fx.url, forged, env.mallory.headers());

    expect((await getTask(env.alice.client, taskId)).status).toBe("input_required");
    answer.resolve({ action: "decline" });
    expect((await result).content).toEqual([{ type: "text", text: "declined" }]);
  });
});

describe("responses routed between cluster nodes (src/http/shared-sessions/reply-router.ts)", () => {
  it("hands a response forwarded from another node to the asking node's request only when it was POSTed on the session that was asked", async () => {
    // Two nodes on one bus: `asking` sends alice's request, `receiving` is where the answers are POSTed.
    const bus = localEventBus();
    const asking = new ReplyRouter(bus, silentLogger);
    const receiving = new ReplyRouter(bus, silentLogger);
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    const transport = asking.wrap(serverSide, "alice-session");
    const delivered: JSONRPCMessage[] = [];
    transport.onmessage = (message) => delivered.push(message);
    const sent: JSONRPCMessage[] = [];
    clientSide.onmessage = (message) => sent.push(message);
    await transport.start();
    await clientSide.start();

    await transport.send({ jsonrpc: "2.0", id: 0, method: "elicitation/create", params: {} });
    const routedId = (sent[0] as { id?: unknown } | undefined)?.id;
    expect(routedId).toMatch(new RegExp(`^mcpr\\.${asking.nodeId}\\.`));
    const answer = (text: string) => ({ jsonrpc: "2.0", id: routedId, result: { action: "accept", content: { answer: text } } });

    expect(receiving.route(answer("mallory's"), "mallory-session")).toBe(true); // consumed: not handed to any server
    expect(delivered).toEqual([]);
    expect(receiving.route(answer("alice's"), "alice-session")).toBe(true);
    expect(delivered).toEqual([{ jsonrpc: "2.0", id: 0, result: { action: "accept", content: { answer: "alice's" } } }]);
    asking.close();
    receiving.close();
  });
});
