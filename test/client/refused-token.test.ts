/**
 * A requestor whose bearer token the server refuses gets the same error in both eras, from one
 * table: the SDK's StreamableHTTPError with the HTTP status (401), its message carrying what the
 * server said, so a caller tells an authentication failure apart the same way whatever the era.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatelessConnection } from "../../src/mcp/requestor/rev2026-07-28/stateless-connection.js";
import { TaskClient } from "../../src/client/task-client.js";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture;

beforeAll(async () => {
  fx = await startHttpServer({ http: { verifier: staticTokenVerifier(new Map([["tok-right", "alice"]])) } });
});
afterAll(async () => {
  await fx.close();
});

const ERAS: Array<{ name: string; call(token: string): Promise<unknown> }> = [
  {
    name: "2025-11-25",
    async call(token) {
      const tasks = await TaskClient.connect(fx.url, { token });
      try {
        return await tasks.callTool("echo", { text: "hi" });
      } finally {
        await tasks.close();
      }
    },
  },
  {
    name: "2026-07-28",
    call: (token) => new TaskClient(new StatelessConnection(fx.url, { token })).callTool("echo", { text: "hi" }),
  },
];

describe.each(ERAS)("a refused bearer token ($name)", (era) => {
  it("is a StreamableHTTPError 401 that carries the server's words", async () => {
    const refused = await era.call("tok-wrong").then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    expect((refused as StreamableHTTPError).message).toMatch(/a valid bearer token is required/);
  });

  it("and the right token is served", async () => {
    expect(await era.call("tok-right")).toMatchObject({ kind: "result", result: { content: [{ type: "text", text: "hi" }] } });
  });
});
