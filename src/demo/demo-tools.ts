import { z } from "zod";
import { TaskError } from "../core/errors.js";
import type { TaskServer } from "../mcp/task-server.js";
import { pause } from "../core/pause.js";
import { CapabilityError } from "../mcp/capability-error.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

async function sleepWithProgress(
  ms: number,
  steps: number,
  signal: AbortSignal,
  progress: (p: number, total: number) => void,
): Promise<void> {
  if (steps <= 0) return pause(ms, signal);
  for (let i = 1; i <= steps; i++) {
    await pause(ms / steps, signal);
    progress(i, steps);
  }
}

/** An approval event's payload, or null when it is not one. */
function approvalOf(payload: unknown): { approved: boolean; by?: string } | null {
  const parsed = z.object({ approved: z.boolean(), by: z.string().max(200).optional() }).safeParse(payload);
  return parsed.success ? parsed.data : null;
}

/**
 * The demo tools (`serve --demo`): examples for users and fixtures for the tests. Each works as a
 * task and, unless noted, as a plain call.
 */
export function registerDemoTools(app: TaskServer): TaskServer {
  app.tool(
    "echo",
    { description: "Echoes text (not callable as a task).", input: z.object({ text: z.string() }) },
    async ({ text: value }) => text(value),
  );

  app.tool(
    "sleep",
    {
      description: "Waits ms milliseconds; with a progressToken, reports `steps` evenly spaced progress notifications.",
      input: z.object({ ms: z.number().int().min(0).max(86_400_000), steps: z.number().int().min(0).max(10_000).optional() }),
      taskSupport: "optional",
      // Waiting twice is the same as waiting once: a host's retried plain call joins the running one.
      annotations: { idempotentHint: true },
      immediateResponse: ({ ms }) => `Sleeping for ${ms} ms; the result will follow.`,
    },
    async ({ ms, steps }, ctx) => {
      await sleepWithProgress(ms, steps ?? 0, ctx.signal, (i, total) => ctx.progress(i, total));
      return text(`slept ${ms} ms`);
    },
  );

  app.tool(
    "fail",
    { description: "Returns an isError result with the given message.", input: z.object({ message: z.string() }), taskSupport: "optional" },
    async ({ message }) => ({ ...text(message), isError: true }),
  );

  app.tool(
    "throw",
    {
      description: "Fails with the JSON-RPC error {code, message}; code in -32099..-32000.",
      input: z.object({ code: z.number().int().min(-32099).max(-32000), message: z.string() }),
      taskSupport: "optional",
    },
    async ({ code, message }) => {
      throw TaskError.protocol(code, message);
    },
  );

  app.tool(
    "ask",
    {
      description: "Asks the user a question through elicitation; survives a restart (the same question is delivered again).",
      input: z.object({ question: z.string() }),
      taskSupport: "optional",
      // Asking has no side effect, so a re-run after a crash is safe: the stored answer is replayed,
      // or the still-pending question is delivered again.
      recovery: "resume",
    },
    async ({ question }, ctx) => {
      try {
        const answer = await ctx.elicit({
          mode: "form",
          message: question,
          requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
        });
        if (answer.action === "accept") return text(`answer: ${String(answer.content?.["answer"] ?? "")}`);
        return text(answer.action === "decline" ? "declined" : "cancelled");
      } catch (error) {
        if (error instanceof CapabilityError) return { ...text(error.message), isError: true };
        throw error;
      }
    },
  );

  app.tool(
    "nap",
    {
      description:
        "Sleeps ms milliseconds (or until `until`, ms since the epoch) with ctx.sleep: holds no handler slot, and as a task survives a restart (it is parked and resumed when its time comes).",
      input: z
        .object({
          ms: z
            .number()
            .int()
            .min(0)
            .max(30 * 86_400_000)
            .optional(),
          until: z.number().int().min(0).optional(),
        })
        .refine((value) => (value.ms === undefined) !== (value.until === undefined), {
          message: "give either ms or until (ms since the epoch)",
        }),
      taskSupport: "optional",
      recovery: "resume",
    },
    async ({ ms, until: at }, ctx) => {
      // The wake-up time is fixed by the first run: a replay sleeps until the same moment.
      const until = await ctx.step("until", async () => at ?? Date.now() + (ms ?? 0));
      await ctx.sleep({ until });
      return text(`napped until ${new Date(until).toISOString()}`);
    },
  );

  app.tool(
    "approve",
    {
      description:
        'Waits (up to its ttl, days if asked) for the event approval/<taskId> with {"approved": boolean, "by"?: string}: completes "approved by …" or fails "denied". Holds nothing while it waits.',
      input: z.object({ action: z.string().min(1).max(1000) }),
      taskSupport: "required",
      recovery: "resume",
    },
    async ({ action }, ctx) => {
      const name = `approval/${ctx.taskId ?? ""}`;
      await ctx.setStatusMessage(`Waiting for approval of: ${action} (emit ${name})`);
      const decision = await ctx.waitForEvent(name);
      if (decision.timedOut) return { ...text(`no decision on: ${action}`), isError: true };
      const answer = approvalOf(decision.payload);
      if (answer === null) return { ...text(`not a decision (expected {"approved": boolean, "by"?: string}): ${action}`), isError: true };
      if (!answer.approved) return { ...text(`denied${answer.by ? ` by ${answer.by}` : ""}: ${action}`), isError: true };
      return text(`approved by ${answer.by ?? "someone"}: ${action}`);
    },
  );

  app.tool(
    "sample",
    { description: "Asks the client's model through sampling.", input: z.object({ prompt: z.string() }), taskSupport: "optional" },
    async ({ prompt }, ctx) => {
      try {
        const reply = await ctx.sample({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 256 });
        const content = Array.isArray(reply.content) ? reply.content[0] : reply.content;
        return text(content && content.type === "text" ? content.text : "");
      } catch (error) {
        if (error instanceof CapabilityError) return { ...text(error.message), isError: true };
        throw error;
      }
    },
  );

  app.tool(
    "batch",
    {
      description: "Like sleep, but must be called as a task.",
      input: z.object({ ms: z.number().int().min(0).max(86_400_000) }),
      taskSupport: "required",
      retryable: true,
    },
    async ({ ms }, ctx) => {
      await pause(ms, ctx.signal);
      return text(`slept ${ms} ms`);
    },
  );
  app.tool(
    "steps",
    {
      description:
        "Runs `count` checkpointed steps of `ms` each (durable execution): after a crash the task resumes, and its result says how many steps ran and how many were restored from checkpoints.",
      input: z.object({ count: z.number().int().min(0).max(10_000), ms: z.number().int().min(0).max(3_600_000) }),
      taskSupport: "optional",
      recovery: "resume",
    },
    async ({ count, ms }, ctx) => {
      let ran = 0;
      for (let i = 1; i <= count; i++) {
        await ctx.step(`step ${i}`, async () => {
          await pause(ms, ctx.signal);
          ran++;
          return i;
        });
        ctx.progress(i, count);
      }
      const restored = count - ran;
      return {
        ...text(`ran ${ran} of ${count} steps, restored ${restored} from checkpoints`),
        structuredContent: { count, ran, restored },
      };
    },
  );
  return app;
}
