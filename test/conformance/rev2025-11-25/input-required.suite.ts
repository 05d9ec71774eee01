import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type CreateMessageRequest,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  callTool,
  callToolAsTask,
  cancelTask,
  deferred,
  expectRpcError,
  getTask,
  isRequest,
  RELATED_TASK,
  taskResult,
  track,
  watchStatuses,
} from "../../support/conformance.js";

import { memoryStore } from "../../../src/store/memory/memory-store.js";
import type { TaskStore } from "../../../src/store/task-store.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import type { Requestor } from "../../support/plain-json-client.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function inputRequiredSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  const ANSWER_SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] };

  /** Answers every elicitation with `answer`, recording the requests. */
  function answerElicitations(
    client: Requestor,
    answer: (request: ElicitRequest) => ElicitResult | Promise<ElicitResult>,
  ): ElicitRequest[] {
    const seen: ElicitRequest[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(request);
      return answer(request);
    });
    return seen;
  }

  /** An error the SDK client answers with exactly this code and message (an McpError would prefix its message). */
  function rpcFailure(code: number, message: string): Error {
    return Object.assign(new Error(message), { code });
  }

  /** Polls tasks/get, as a requestor that does not rely on notifications does (T-GET-2, T-NOTE-2). */
  async function pollUntil(client: Requestor, taskId: string, status: string): Promise<void> {
    for (;;) {
      const task = await getTask(client, taskId);
      if (task.status === status) return;
      if (["completed", "failed", "cancelled"].includes(task.status)) throw new Error(`task ended ${task.status}, never ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  describe("T-INPUT: input_required", () => {
    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-1/T-INPUT-2: the task's elicitation reaches the requestor with related-task _meta", async () => {
      fx = await start();
      const requests = answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "blue" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "Favourite colour?" });
      await taskResult(fx.client, task.taskId);
      expect(requests).toHaveLength(1);
      expect(requests[0]?.params._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
      expect(requests[0]?.params).toMatchObject({ message: "Favourite colour?", requestedSchema: ANSWER_SCHEMA });
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-1: while the requestor's answer is pending the task is input_required", async () => {
      fx = await start();
      const answer = deferred<ElicitResult>();
      const asked = deferred<void>();
      answerElicitations(fx.client, () => {
        asked.resolve();
        return answer.promise;
      });
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      const result = taskResult(fx.client, task.taskId);
      await asked.promise;
      expect((await getTask(fx.client, task.taskId)).status).toBe("input_required");
      answer.resolve({ action: "accept", content: { answer: "later" } });
      expect((await result).content).toEqual([{ type: "text", text: "answer: later" }]);
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-INPUT-4: once the answer arrives the task goes back to working, then completes with the answer", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "42" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "The answer?" });
      const result = await taskResult(fx.client, task.taskId);
      expect(result.content).toEqual([{ type: "text", text: "answer: 42" }]);
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "working", "completed"]);
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-4: a declined elicitation resumes the handler, which reports it", async () => {
      fx = await start();
      answerElicitations(fx.client, () => ({ action: "decline" }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      expect((await taskResult(fx.client, task.taskId)).content).toEqual([{ type: "text", text: "declined" }]);
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-4: a cancelled elicitation resumes the handler, which reports it", async () => {
      fx = await start();
      answerElicitations(fx.client, () => ({ action: "cancel" }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      expect((await taskResult(fx.client, task.taskId)).content).toEqual([{ type: "text", text: "cancelled" }]);
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming(
      "T-INPUT-3: the pending elicitation is delivered when tasks/result is called only after tasks/get showed input_required",
      async () => {
        fx = await start();
        const requests = answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "polled" } }));
        const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
        await pollUntil(fx.client, task.taskId, "input_required");
        // Nothing is pushed to the requestor before it opens tasks/result.
        expect(requests).toHaveLength(0);
        const result = await taskResult(fx.client, task.taskId);
        expect(requests).toHaveLength(1);
        expect(result.content).toEqual([{ type: "text", text: "answer: polled" }]);
        expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
      },
    );

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-3: the elicitation travels on the tasks/result request's exchange, before its response", async () => {
      fx = await start();
      answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "x" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      await pollUntil(fx.client, task.taskId, "input_required");
      await taskResult(fx.client, task.taskId);
      const { received } = fx.traffic();
      const elicitAt = received.findIndex((m) => isRequest(m) && m.method === "elicitation/create");
      const resultAt = received.findIndex(
        (m) => "result" in m && (m.result as { _meta?: Record<string, unknown> })._meta?.[RELATED_TASK] !== undefined,
      );
      expect(elicitAt).toBeGreaterThanOrEqual(0);
      expect(resultAt).toBeGreaterThan(elicitAt);
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-3: two tasks/result requests open at once deliver the elicitation only once", async () => {
      fx = await start();
      const requests = answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "once" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      await pollUntil(fx.client, task.taskId, "input_required");
      const [a, b] = await Promise.all([taskResult(fx.client, task.taskId), taskResult(fx.client, task.taskId)]);
      expect(requests).toHaveLength(1);
      expect(a.content).toEqual([{ type: "text", text: "answer: once" }]);
      expect(b.content).toEqual(a.content);
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming(
      "T-INPUT-1/T-INPUT-2: the task's sampling request reaches the requestor with related-task _meta and the reply completes it",
      async () => {
        fx = await start();
        const requests: CreateMessageRequest[] = [];
        fx.client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
          requests.push(request);
          return { model: "test-model", role: "assistant", content: { type: "text", text: "a haiku" } };
        });
        const { task } = await callToolAsTask(fx.client, "sample", { prompt: "Write a haiku" });
        const result = await taskResult(fx.client, task.taskId);
        expect(result.content).toEqual([{ type: "text", text: "a haiku" }]);
        expect(requests).toHaveLength(1);
        expect(requests[0]?.params._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
        expect(requests[0]?.params).toMatchObject({
          messages: [{ role: "user", content: { type: "text", text: "Write a haiku" } }],
          maxTokens: 256,
        });
      },
    );

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-INPUT-4: a sampling task goes input_required → working → completed", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      fx.client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        model: "m",
        role: "assistant",
        content: { type: "text", text: "ok" },
      }));
      const { task } = await callToolAsTask(fx.client, "sample", { prompt: "hi" });
      await taskResult(fx.client, task.taskId);
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "working", "completed"]);
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming(
      "T-INPUT-4: a handler that asks twice goes input_required → working twice, each request with related-task _meta",
      async () => {
        fx = await start({
          setup: (app) =>
            app.tool("survey", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
              const answers: string[] = [];
              for (const message of ["First?", "Second?"]) {
                const reply = await ctx.elicit({
                  mode: "form",
                  message,
                  requestedSchema: { type: "object", properties: { answer: { type: "string" } } },
                });
                answers.push(String(reply.content?.["answer"]));
              }
              return { content: [{ type: "text", text: answers.join(",") }] };
            }),
        });
        const statuses = watchStatuses(fx.client);
        const requests = answerElicitations(fx.client, (r) => ({
          action: "accept",
          content: { answer: r.params.message === "First?" ? "a" : "b" },
        }));
        const { task } = await callToolAsTask(fx.client, "survey", {});
        expect((await taskResult(fx.client, task.taskId)).content).toEqual([{ type: "text", text: "a,b" }]);
        expect(requests.map((r) => r.params._meta?.[RELATED_TASK])).toEqual([{ taskId: task.taskId }, { taskId: task.taskId }]);
        await statuses.until(task.taskId, "completed");
        expect(statuses.statuses(task.taskId)).toEqual(["input_required", "working", "input_required", "working", "completed"]);
      },
    );

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-INPUT-4: a JSON-RPC error answer reaches the handler; the task fails and tasks/result replays the error", async () => {
      fx = await start();
      fx.client.setRequestHandler(ElicitRequestSchema, async () => {
        throw rpcFailure(-32010, "user unavailable");
      });
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      await expectRpcError(taskResult(fx.client, task.taskId), -32010, "user unavailable");
      expect(await getTask(fx.client, task.taskId)).toMatchObject({ status: "failed", statusMessage: "user unavailable" });
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming(
      "T-INPUT-4: an error answer with code -32001 (the SDK's local timeout code) is still the requestor's answer, not a lost delivery",
      async () => {
        fx = await start();
        fx.client.setRequestHandler(ElicitRequestSchema, async () => {
          throw rpcFailure(-32001, "the user did not answer in time");
        });
        const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
        await expectRpcError(taskResult(fx.client, task.taskId), -32001, "the user did not answer in time");
        expect((await getTask(fx.client, task.taskId)).status).toBe("failed");
      },
    );

    it("T-INPUT: a requestor without the elicitation capability gets an isError result from ask, saying so", async () => {
      fx = await start({}, {});
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      const result = await taskResult(fx.client, task.taskId);
      expect(result.isError).toBe(true);
      expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/elicitation/) });
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage).toMatch(/elicitation/);
      // The task never waited on the requestor, and nothing was sent to it.
      expect(fx.traffic().received.some((m) => isRequest(m))).toBe(false);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-INPUT: a requestor without the sampling capability gets an isError result from sample, saying so", async () => {
      fx = await start({}, { elicitation: {} });
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sample", { prompt: "hi" });
      const result = await taskResult(fx.client, task.taskId);
      expect(result.isError).toBe(true);
      expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/sampling/) });
      await statuses.until(task.taskId, "failed");
      expect(statuses.statuses(task.taskId)).not.toContain("input_required");
    });

    it("T-INPUT: a plain call of ask by a requestor without the elicitation capability gets an isError result", async () => {
      fx = await start({}, {});
      const result = await callTool(fx.client, "ask", { question: "?" });
      expect(result.isError).toBe(true);
      expect(result.content[0]).toMatchObject({ type: "text", text: expect.stringMatching(/elicitation/) });
    });

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-META-1: a plain (non-task) call's elicitation carries no related-task _meta", async () => {
      fx = await start();
      const requests = answerElicitations(fx.client, () => ({ action: "accept", content: { answer: "plain" } }));
      const result = await callTool(fx.client, "ask", { question: "?" });
      expect(result.content).toEqual([{ type: "text", text: "answer: plain" }]);
      expect(requests[0]?.params._meta?.[RELATED_TASK]).toBeUndefined();
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-INPUT-5: a requestor that reconnects collects the pending elicitation on its new session's tasks/result", async () => {
      fx = await start();
      const first = await fx.connectClient();
      const statuses = watchStatuses(first);
      const { task } = await callToolAsTask(first, "ask", { question: "Still there?" });
      await statuses.until(task.taskId, "input_required");
      await first.close();
      const again = await fx.connectClient();
      const requests = answerElicitations(again, () => ({ action: "accept", content: { answer: "yes" } }));
      expect((await taskResult(again, task.taskId)).content).toEqual([{ type: "text", text: "answer: yes" }]);
      expect(requests[0]?.params._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    });

    // Streaming paths only: it needs to answer the server's requests. Not on http-local: there a
    // dropped tasks/result stream (client gone, session not ended) leaves the delivered question
    // outstanding, so the next tasks/result never gets it — a behaviour difference reported to the
    // lead, left out here until src/ decides.
    on(path, ["in-memory", "http-shared"])(
      "T-INPUT-5: an elicitation whose stream closed before it was answered is delivered again on the next tasks/result",
      async () => {
        fx = await start();
        const first = await fx.connectClient();
        const delivered = deferred<void>();
        // The first session receives the request but goes away without answering.
        first.setRequestHandler(ElicitRequestSchema, async () => {
          delivered.resolve();
          return new Promise<never>(() => {});
        });
        const { task } = await callToolAsTask(first, "ask", { question: "Again?" });
        const abandoned = track(taskResult(first, task.taskId));
        await delivered.promise;
        await first.close();
        await abandoned.promise.catch(() => {});
        const again = await fx.connectClient();
        const requests = answerElicitations(again, () => ({ action: "accept", content: { answer: "second time" } }));
        expect((await taskResult(again, task.taskId)).content).toEqual([{ type: "text", text: "answer: second time" }]);
        expect(requests).toHaveLength(1);
      },
    );
    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming(
      "T-INPUT-5: a tasks/result abandoned while it looks for queued questions sends none, and the next tasks/result gets the question",
      async () => {
        // The store's answer to "what is queued?" is held until the requestor has given up waiting.
        const store = memoryStore();
        const lookedUp = deferred<void>();
        const release = deferred<void>();
        let hold = false;
        const held: TaskStore = {
          ...store,
          pendingInputs: async (taskId) => {
            const pending = await store.pendingInputs(taskId);
            if (hold) {
              hold = false;
              lookedUp.resolve();
              await release.promise;
            }
            return pending;
          },
        };
        fx = await start({ store: held });
        const first = await fx.connectClient();
        const askedFirst = deferred<void>();
        first.setRequestHandler(ElicitRequestSchema, async () => {
          askedFirst.resolve();
          return new Promise<never>(() => {});
        });
        const statuses = watchStatuses(first);
        const { task } = await callToolAsTask(first, "ask", { question: "Still waiting?" });
        await statuses.until(task.taskId, "input_required");
        hold = true;
        const giveUp = new AbortController();
        const abandoned = first.request({ method: "tasks/result", params: { taskId: task.taskId } }, CallToolResultSchema, {
          signal: giveUp.signal,
        });
        await lookedUp.promise;
        giveUp.abort("no longer waiting");
        await abandoned.catch(() => {});
        await fx.heard(first); // the server hears of the cancellation
        release.resolve();

        const again = await fx.connectClient();
        answerElicitations(again, () => ({ action: "accept", content: { answer: "yes" } }));
        const timeout = new Promise((_, reject) =>
          setTimeout(() => reject(new Error("the question never reached the next tasks/result")), 2000),
        );
        expect(await Promise.race([taskResult(again, task.taskId), timeout])).toMatchObject({
          content: [{ type: "text", text: "answer: yes" }],
        });
        expect(
          await Promise.race([
            askedFirst.promise.then(() => "asked"),
            new Promise((resolve) => setTimeout(() => resolve("not asked"), 50)),
          ]),
        ).toBe("not asked");
      },
    );

    // Streaming paths only: it needs to answer the server's requests.
    streaming("T-CANCEL-3: a question still out when its task is cancelled is withdrawn from the requestor", async () => {
      fx = await start();
      const client = fx.client;
      const delivered = deferred<void>();
      const withdrawn = deferred<unknown>();
      let first = true;
      client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
        if (first) {
          first = false;
          return { action: "decline" };
        }
        extra.signal.addEventListener("abort", () => withdrawn.resolve(extra.signal.reason));
        delivered.resolve();
        return new Promise<never>(() => {});
      });
      // The SDK client (1.32.2) ignores notifications/cancelled for request id 0 (a falsy-id check),
      // so the session's first server→client request is spent on a plain call.
      await callTool(client, "ask", { question: "Warm-up?" });
      const { task } = await callToolAsTask(client, "ask", { question: "Still there?" });
      const waiting = track(taskResult(client, task.taskId));
      await delivered.promise;
      await cancelTask(client, task.taskId);
      await expectRpcError(waiting.promise, -32800);
      // The SDK aborts a handler's signal when the peer sends notifications/cancelled for its request.
      await withdrawn.promise;
    });
  });
}
