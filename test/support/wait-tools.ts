/**
 * A tools module for `mcp-tasks serve --tools`: `nap-in-memory` sleeps with ctx.sleep but, without
 * `recovery: "resume"`, cannot be replayed, so its wait stays in memory (it is never parked);
 * `nap-twice` naps twice in a row, replayable: parked at each nap, its last run replays past both.
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

export default function register(app: TaskServer): void {
  app.tool("nap-in-memory", { input: z.object({ ms: z.number().int().min(0) }), taskSupport: "required" }, async ({ ms }, ctx) => {
    await ctx.sleep(ms);
    return { content: [{ type: "text", text: `napped ${ms} ms in memory` }] };
  });
  app.tool(
    "nap-twice",
    { input: z.object({ ms: z.number().int().min(0) }), taskSupport: "required", recovery: "resume" },
    async ({ ms }, ctx) => {
      const start = await ctx.step("start", async () => Date.now());
      await ctx.sleep({ until: start + ms });
      await ctx.sleep({ until: start + 2 * ms });
      return { content: [{ type: "text", text: "napped twice" }] };
    },
  );
}
