/**
 * A tools module for `mcp-tasks serve --tools`: `nap-in-memory` sleeps with ctx.sleep but, without
 * `recovery: "resume"`, cannot be replayed, so its wait stays in memory (it is never parked).
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

export default function register(app: TaskServer): void {
  app.tool("nap-in-memory", { input: z.object({ ms: z.number().int().min(0) }), taskSupport: "required" }, async ({ ms }, ctx) => {
    await ctx.sleep(ms);
    return { content: [{ type: "text", text: `napped ${ms} ms in memory` }] };
  });
}
