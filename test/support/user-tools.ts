/**
 * A user's tools module, as `mcp-tasks serve --tools MODULE` loads it: a default export taking
 * the app. Used by the CLI end-to-end test.
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

export default function register(app: TaskServer): void {
  app.tool("render", { input: z.object({ scene: z.string() }), taskSupport: "optional" }, async ({ scene }, ctx) => {
    ctx.progress(1, 2, "loading");
    const choice = ctx.can.elicit
      ? await ctx.elicit({
          mode: "form",
          message: "Use 4K?",
          requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
        })
      : null;
    ctx.progress(2, 2, "rendering");
    const quality = choice?.action === "accept" ? String(choice.content?.["answer"]) : "default";
    return { content: [{ type: "text", text: `rendered ${scene} (${quality})` }] };
  });
}
