/**
 * A request answered as plain JSON (a task-augmented tools/call, tasks/get) goes out with its
 * Content-Length, in one piece: no chunked transfer encoding for an answer whose size is known.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callToolAsTask } from "../support/conformance.js";

let fx: HttpServerFixture;
beforeEach(async () => {
  fx = await startHttpServer();
});
afterEach(async () => fx.close());

describe("plain JSON answers", () => {
  it("carry a Content-Length equal to the body's bytes and no chunked encoding", async () => {
    const c = await fx.connect();
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 0 });
    const got = await rawPost(fx.url, { jsonrpc: "2.0", id: 7, method: "tasks/get", params: { taskId: task.taskId } }, c.headers());
    expect(got.status).toBe(200);
    expect(got.contentType).toMatch(/^application\/json/);
    expect(got.headers.get("transfer-encoding")).toBeNull();
    expect(Number(got.headers.get("content-length"))).toBe(Buffer.byteLength(got.text));
    expect(got.json).toMatchObject({ id: 7, result: { taskId: task.taskId } });
  });
});
