/**
 * The MCP conventions' `mcp.server.operation.duration` in /metrics (real `mcp-tasks serve`, real
 * HTTP, tracing off): `mcp_server_operation_duration_seconds`, with the conventions' bucket
 * boundaries and its attributes as labels, moves with each request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { scrape, valueOf } from "../support/prometheus.js";
import { statelessRpc, statelessResult } from "../support/stateless-client.js";

const NAME = "mcp_server_operation_duration_seconds";
const BUCKETS = ["0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30", "60", "120", "300", "+Inf"];
let url: string;

beforeAll(async () => {
  url = await CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]).url();
}, 30_000);

afterAll(async () => {
  await killAll();
});

describe("mcp_server_operation_duration_seconds in /metrics", { timeout: 30_000 }, () => {
  it("counts a tools/call by method and tool, in the conventions' buckets", async () => {
    await statelessResult(url, "tools/call", { name: "echo", arguments: { text: "hi" } });
    const samples = await scrape(url);
    const labels = { mcp_method_name: "tools/call", gen_ai_tool_name: "echo", error_type: "" };
    expect(valueOf(samples, `${NAME}_count`, labels)).toBeGreaterThanOrEqual(1);
    const les = samples.filter((s) => s.name === `${NAME}_bucket` && s.labels["gen_ai_tool_name"] === "echo").map((s) => s.labels["le"]);
    expect(les).toEqual(BUCKETS);
  });

  it("labels a failed request with error.type, the JSON-RPC code", async () => {
    const { body } = await statelessRpc(url, "tasks/get", { taskId: "no-such-task" });
    expect(body.error?.code).toBe(-32602);
    const samples = await scrape(url);
    expect(valueOf(samples, `${NAME}_count`, { mcp_method_name: "tasks/get", error_type: "-32602" })).toBeGreaterThanOrEqual(1);
  });
});
