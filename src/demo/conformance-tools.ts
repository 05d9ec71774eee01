import { z } from "zod";
import { RpcCode, TaskError } from "../core/errors.js";
import type { TaskServer } from "../mcp/task-server.js";
import { pause } from "../core/pause.js";
import { registerConformanceFeatures } from "./conformance-features.js";
import { registerLegacyConformanceTools } from "./conformance-legacy-tools.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/**
 * The fixture tools the official conformance suite's `tasks-*` server scenarios call
 * (requirements Appendix B), and those of its tool scenarios (`test_*`, see
 * registerLegacyConformanceTools), written against the public API only.
 */
export function registerConformanceTools(app: TaskServer): TaskServer {
  // Never a task (taskSupport defaults to "forbidden"); a legacy `params.task` is ignored (X-LEG-2).
  app.tool("greet", { description: "Greets by name, synchronously.", input: z.object({ name: z.string() }) }, async ({ name }) =>
    text(`Hello, ${name}!`),
  );
  // server-sse-polling (SEP-1699): ends its stream mid-call; the client resumes with Last-Event-ID.
  app.tool(
    "test_reconnection",
    { description: "Closes its SSE stream, then answers on the resumed one.", input: z.object({}) },
    async (_args, ctx) => {
      ctx.closeStream?.();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return text("Reconnection test completed");
    },
  );

  app.tool(
    "slow_compute",
    {
      description: "Sleeps `seconds`, then reports the label; a task when that takes long (taskSupport optional).",
      input: z.object({ seconds: z.number().min(0).max(3600), label: z.string() }),
      taskSupport: "optional",
    },
    async ({ seconds, label }, ctx) => {
      await pause(seconds * 1000, ctx.signal);
      return text(`Computed ${label} in ${seconds} s`);
    },
  );

  app.tool(
    "failing_job",
    {
      description: "Runs only as a task; after about a second the tool reports an error (isError).",
      input: z.object({}),
      taskSupport: "required",
    },
    async (_args, ctx) => {
      await pause(1000, ctx.signal);
      return { ...text("The job failed: the simulated upstream service rejected it"), isError: true };
    },
  );

  app.tool(
    "protocol_error_job",
    { description: "Runs only as a task and ends in a JSON-RPC error.", input: z.object({}), taskSupport: "required" },
    async (_args, ctx) => {
      await pause(200, ctx.signal);
      throw TaskError.protocol(RpcCode.InternalError, "API rate limit exceeded");
    },
  );

  app.tool(
    "confirm_delete",
    {
      description: "Runs only as a task; asks for confirmation (elicitation) before it deletes `filename`.",
      input: z.object({ filename: z.string() }),
      taskSupport: "required",
    },
    async ({ filename }, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: `Delete ${filename}?`,
        requestedSchema: {
          type: "object",
          properties: { confirm: { type: "boolean", description: "Confirm the deletion" } },
          required: ["confirm"],
        },
      });
      const confirmed = answer.action === "accept" && answer.content?.["confirm"] === true;
      return text(confirmed ? `Deleted ${filename}` : `Kept ${filename}`);
    },
  );

  app.tool(
    "multi_input",
    {
      description: "Runs only as a task; asks two questions at once (two elicitations pending together).",
      input: z.object({}),
      taskSupport: "required",
    },
    async (_args, ctx) => {
      const [who, go] = await Promise.all([
        ctx.elicit({
          mode: "form",
          message: "Your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        }),
        ctx.elicit({
          mode: "form",
          message: "Proceed?",
          requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
        }),
      ]);
      const name = who.action === "accept" ? String(who.content?.["name"] ?? "") : "";
      const proceed = go.action === "accept" && go.content?.["confirm"] === true;
      return text(`Hello ${name || "stranger"}; ${proceed ? "proceeding" : "stopping"}`);
    },
  );

  app.tool(
    "test_tool_with_task",
    {
      description: "Runs only as a task; asks the user's name first, on the call itself (MRTR), then greets them from the task.",
      input: z.object({}),
      taskSupport: "required",
      // X-MRTR-2: asked before the task exists; under 2025-11-25 it is the task's first question.
      gather: async (_args, ctx) => {
        const answer = await ctx.elicit({
          mode: "form",
          message: "What is your name?",
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        });
        return answer.action === "accept" ? String(answer.content?.["name"] ?? "") : "";
      },
    },
    async (_args, ctx) => {
      await pause(300, ctx.signal);
      return text(`Hello, ${String(ctx.gathered) || "stranger"}! The task finished.`);
    },
  );

  registerConformanceFeatures(app);
  return registerLegacyConformanceTools(app);
}
