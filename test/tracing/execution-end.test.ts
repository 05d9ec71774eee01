/**
 * How a task's execution span ends when its handler is stopped from outside (a real `serve`
 * process, a real OTLP/HTTP collector): a cancel ends it `cancelled`, a ttl that runs out
 * `failed` with status ERROR — each with the abort's reason and an `mcp.task.status` event, as a
 * handler's own end does; the `tasks/cancel` span says the status it left, and a 2026-07-28 call
 * answered inline the status of the task it answered for. The execution span is the engine's, the same whichever era created the
 * task; the tasks here are created through 2025-11-25.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, cancelTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { statelessResult } from "../support/stateless-client.js";

const SERVICE = "execution-end";
let receiver: OtlpReceiver;
let requestor: HttpClient;
let url: string;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"], { env: receiver.env("http/json", SERVICE) });
  url = await server.url();
  requestor = await connectHttpClient(url);
}, 30_000);

afterAll(async () => {
  await requestor?.close();
  await killAll();
  await receiver?.close();
});

function executionOf(taskId: string) {
  return receiver.span(
    (s) => s.resource["service.name"] === SERVICE && s.name === "execute_tool sleep" && s.attributes["mcp.task.id"] === taskId,
    `the execution span of ${taskId}`,
    20_000,
  );
}

describe("an execution span stopped from outside", { timeout: 60_000 }, () => {
  it("a cancel ends it with mcp.task.status cancelled, the abort's reason and a status event", async () => {
    const { task } = await callToolAsTask(requestor.client, "sleep", { ms: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cancelTask(requestor.client, task.taskId);
    const span = await executionOf(task.taskId);
    expect(span.attributes).toMatchObject({ "mcp.task.status": "cancelled", "mcp.task.abort_reason": "cancelled" });
    expect(span.events.filter((e) => e.name === "mcp.task.status").map((e) => e.attributes["mcp.task.status"])).toEqual(["cancelled"]);
    expect(span.statusCode).not.toBe(2);
    // The cancel's own span says the status it left.
    const cancel = await receiver.span(
      (s) => s.resource["service.name"] === SERVICE && s.name === "tasks/cancel" && s.attributes["mcp.task.id"] === task.taskId,
      "the tasks/cancel span",
    );
    expect(cancel.attributes["mcp.task.status"]).toBe("cancelled");
  });

  it("a ttl that runs out ends it failed, with status ERROR, error.type expired and the abort's reason", async () => {
    const { task } = await callToolAsTask(requestor.client, "sleep", { ms: 60_000 }, { ttl: 1_000 });
    const span = await executionOf(task.taskId);
    expect(span.attributes).toMatchObject({ "mcp.task.status": "failed", "mcp.task.abort_reason": "expired", "error.type": "expired" });
    expect(span.events.filter((e) => e.name === "mcp.task.status").map((e) => e.attributes["mcp.task.status"])).toEqual(["failed"]);
    expect(span.statusCode).toBe(2);
  });
});

describe("a 2026-07-28 call answered inline", { timeout: 60_000 }, () => {
  it("its tools/call span ends with the status of the task it answers for (completed), as the execution span does", async () => {
    const answer = await statelessResult(url, "tools/call", { name: "sleep", arguments: { ms: 10 } });
    expect(answer["resultType"]).toBe("complete");
    const served = await receiver.span(
      (s) =>
        s.resource["service.name"] === SERVICE && s.name === "tools/call sleep" && s.attributes["mcp.protocol.version"] === "2026-07-28",
      "the tools/call span",
    );
    expect(served.attributes["mcp.task.status"]).toBe("completed");
    const execution = await executionOf(String(served.attributes["mcp.task.id"]));
    expect(execution.attributes["mcp.task.status"]).toBe("completed");
  });
});
