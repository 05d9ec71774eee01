/**
 * Two requestors on one MCP session (as two CLI runs resuming the same stored session are): the
 * SDK numbers each one's requests from 0, so their ids meet, and a Streamable HTTP server answers a
 * request on the stream of the latest request with that id. With PrivateRequestIds each gets its
 * own answers. Real SDK clients over real HTTP against our server.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrivateRequestIds } from "../../src/client/private-request-ids.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let server: HttpServerFixture;
const clients: Client[] = [];
beforeEach(async () => {
  server = await startHttpServer({ app: { pollIntervalMs: 50 } });
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  await server.close();
});

/** A client on `url`: a new session, or the given one resumed without initialize (as the CLI does). */
async function requestor(
  url: URL,
  resume?: { sessionId: string; protocolVersion: string },
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, resume ? { sessionId: resume.sessionId } : {});
  const client = new Client({ name: "requestor", version: "0.0.0" });
  clients.push(client);
  await client.connect(new PrivateRequestIds(transport));
  if (resume) transport.setProtocolVersion(resume.protocolVersion);
  return { client, transport };
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text?: string } | undefined)?.text;

describe("PrivateRequestIds: requestors sharing one session", { timeout: 30_000 }, () => {
  it("two requestors waiting in tasks/result on one session, with the same SDK request numbers, each get their own task's result", async () => {
    const a = await requestor(server.url); // 0 initialize
    const sessionId = a.transport.sessionId as string;
    const b = await requestor(server.url, { sessionId, protocolVersion: a.transport.protocolVersion ?? "2025-11-25" });
    await b.client.ping(); // 0 ping: from here on both number alike
    const [slow, fast] = await Promise.all([
      callToolAsTask(b.client, "sleep", { ms: 1500 }),
      callToolAsTask(a.client, "sleep", { ms: 300 }),
    ]); // 1 each
    const results = await Promise.all([taskResult(b.client, slow.task.taskId), taskResult(a.client, fast.task.taskId)]); // 2 each
    expect(results.map(text)).toEqual(["slept 1500 ms", "slept 300 ms"]);
  });
});
