/**
 * A tools module for `mcp-tasks serve --tools`: `hold` runs until its signal aborts, and says so
 * on stderr (one JSON line, as the server logs), so a test sees a withdrawn call reach the server.
 */
import { z } from "zod";
import type { TaskServer } from "../../src/mcp/task-server.js";

export default function register(app: TaskServer): void {
  app.tool("hold", { input: z.object({ tag: z.string() }), taskSupport: "optional" }, async ({ tag }, ctx) => {
    process.stderr.write(`${JSON.stringify({ msg: "hold started", tag })}\n`);
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    process.stderr.write(`${JSON.stringify({ msg: "hold aborted", tag, reason: String(ctx.signal.reason) })}\n`);
    return { content: [{ type: "text", text: "let go" }] };
  });
}
