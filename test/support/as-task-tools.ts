/**
 * Tools that ask their client through client-hosted tasks (`ctx.elicit/sample(…, { asTask: true })`).
 * A tools module for `mcp-tasks serve --tools`, and a setup for in-process fixtures.
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

export default function register(app: TaskServer): void {
  app.tool(
    "ask_as_task",
    { input: z.object({ question: z.string(), ttl: z.number().optional() }), taskSupport: "optional" },
    async ({ question, ttl }, ctx) => {
      const answer = await ctx.elicit(
        {
          mode: "form",
          message: question,
          requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
        },
        { asTask: true, ...(ttl !== undefined && { ttl }) },
      );
      return text(answer.action === "accept" ? `answer: ${String(answer.content?.["answer"])}` : answer.action);
    },
  );
  app.tool("sample_as_task", { input: z.object({ prompt: z.string() }), taskSupport: "optional" }, async ({ prompt }, ctx) => {
    const reply = await ctx.sample(
      { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 64 },
      { asTask: true },
    );
    const content = Array.isArray(reply.content) ? reply.content[0] : reply.content;
    return text(content && content.type === "text" ? `model: ${content.text}` : "");
  });
}
