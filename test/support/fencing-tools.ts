/**
 * Tools whose results name the worker process that ran them (`MCP_TASKS_TEST_WORKER`), loaded
 * with `--tools` by the cluster tests of fencing: after a worker was cut off and another took its
 * tasks over, each task's result, checkpoints and answers show whose claim they came from.
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

const worker = (): string => process.env["MCP_TASKS_TEST_WORKER"] ?? "front";

/** Waits without looking at the signal: the run goes on to its end and writes, even after its lease is lost. */
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export default function register(app: TaskServer): void {
  app.tool(
    "whoami",
    { input: z.object({ ms: z.number().int().min(0) }), taskSupport: "required", retryable: true },
    async ({ ms }, ctx) => {
      ctx.progress(0, 1, `started on ${worker()}`);
      await wait(ms);
      ctx.progress(1, 1, `finished on ${worker()}`);
      return { content: [{ type: "text", text: `ran on ${worker()}` }], structuredContent: { worker: worker() } };
    },
  );

  app.tool(
    "whosteps",
    { input: z.object({ count: z.number().int().min(1), ms: z.number().int().min(0) }), taskSupport: "required", recovery: "resume" },
    async ({ count, ms }, ctx) => {
      const steps: Array<{ worker: string; at: number }> = [];
      for (let i = 1; i <= count; i++) {
        steps.push(
          await ctx.step(`step ${i}`, async () => {
            await wait(ms);
            return { worker: worker(), at: Date.now() };
          }),
        );
      }
      return { content: [{ type: "text", text: `finished on ${worker()}` }], structuredContent: { worker: worker(), steps } };
    },
  );

  app.tool(
    "whoasks",
    // Kept in memory while it waits (not parked), so its lease — and what fencing does to a cut-off
    // worker's writes — is what the tests look at; a parked question holds no lease to lose.
    { input: z.object({ question: z.string() }), taskSupport: "required", recovery: "resume", park: false },
    async ({ question }, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: question,
        requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
      });
      const said = answer.action === "accept" ? String(answer.content?.["answer"] ?? "") : answer.action;
      return { content: [{ type: "text", text: `${worker()}: ${said}` }], structuredContent: { worker: worker(), answer: said } };
    },
  );
}
