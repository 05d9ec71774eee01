/** `mcp-tasks serve` speaks 2026-07-28 on its endpoint too, and `--inline-wait-ms` sets when an optional call becomes a task. */
import { afterEach, describe, expect, it } from "vitest";
import { CliProcess } from "../../support/cli-process.js";
import { statelessResult } from "../../support/stateless-client.js";

let serve: CliProcess | undefined;
afterEach(async () => {
  await serve?.kill("SIGKILL");
  serve = undefined;
});

describe("mcp-tasks serve, 2026-07-28", { timeout: 30_000 }, () => {
  it("answers an optional tool that ends at once inline by default (250 ms)", async () => {
    serve = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--no-web"]);
    const url = await serve.url(20_000);
    expect(await statelessResult(url, "tools/call", { name: "sleep", arguments: { ms: 0 } })).toEqual({
      resultType: "complete",
      content: [{ type: "text", text: "slept 0 ms" }],
    });
  });

  it("with --inline-wait-ms 0 answers the same call with the CreateTaskResult", async () => {
    serve = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--no-web", "--inline-wait-ms", "0"]);
    const url = await serve.url(20_000);
    expect((await statelessResult(url, "tools/call", { name: "sleep", arguments: { ms: 0 } }))["resultType"]).toBe("task");
  });
});
