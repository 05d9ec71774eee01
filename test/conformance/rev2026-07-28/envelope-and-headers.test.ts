/**
 * Stateless 2026-07-28 requests on the HTTP endpoint: no initialize, no session; the envelope,
 * the routing headers, `resultType`, server/discover, tools/list and plain tools/call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { envelope, statelessResult, statelessRpc, TASKS_EXT, V2026 } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer();
});
afterAll(() => server.close());

describe("server/discover (X-CAP-3)", () => {
  it("advertises the tasks extension under capabilities.extensions, with resultType complete and 2026-07-28 among the versions", async () => {
    const result = await statelessResult(server.url, "server/discover");
    expect(result["resultType"]).toBe("complete");
    expect(result["supportedVersions"]).toContain(V2026);
    expect(result["capabilities"]).toMatchObject({ tools: {}, extensions: { [TASKS_EXT]: {} } });
  });

  it("has no 2025-11-25 capabilities.tasks slot (X-LEG-3, X-CONF-12)", async () => {
    const result = await statelessResult(server.url, "server/discover");
    expect(result["capabilities"]).not.toHaveProperty("tasks");
  });

  it("is served from the body's envelope alone when no MCP-Protocol-Version header and no session id come with it", async () => {
    const { status, body } = await statelessRpc(server.url, "server/discover", {}, { headers: { "mcp-protocol-version": undefined } });
    expect(status).toBe(200);
    expect(body.result?.["resultType"]).toBe("complete");
  });

  it("advertises no extension when task support is off", async () => {
    const off = await startTasksExtServer({ app: { tasks: false } });
    try {
      const result = await statelessResult(off.url, "server/discover");
      // The fixture server also has resources and prompts (their capabilities stay); no extension.
      expect(result["capabilities"]).toMatchObject({ tools: {} });
      expect(result["capabilities"]).not.toHaveProperty("extensions");
    } finally {
      await off.close();
    }
  });
});

describe("the request envelope (X-CAP-8)", () => {
  it("refuses a request without _meta with -32602 and HTTP 400", async () => {
    const { status, body } = await statelessRpc(server.url, "tools/list", {}, { meta: null });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32602);
  });

  it("refuses a request without io.modelcontextprotocol/clientCapabilities with -32602 and HTTP 400", async () => {
    const meta = envelope();
    delete meta["io.modelcontextprotocol/clientCapabilities"];
    const { status, body } = await statelessRpc(server.url, "tools/list", {}, { meta });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32602);
  });

  it("refuses a request without io.modelcontextprotocol/protocolVersion with -32602 and HTTP 400", async () => {
    const meta = envelope();
    delete meta["io.modelcontextprotocol/protocolVersion"];
    const { status, body } = await statelessRpc(server.url, "tools/list", {}, { meta });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32602);
  });

  it("refuses malformed clientCapabilities (an array) with -32602", async () => {
    const { status, body } = await statelessRpc(
      server.url,
      "tools/list",
      {},
      { meta: { ...envelope(), "io.modelcontextprotocol/clientCapabilities": [] } },
    );
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32602);
  });

  it("refuses a malformed clientInfo (no version) with -32602", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/list",
      {},
      { meta: { ...envelope(), "io.modelcontextprotocol/clientInfo": { name: "c" } } },
    );
    expect(body.error?.code).toBe(-32602);
  });

  it("checks the envelope on tasks/* requests too", async () => {
    const { body } = await statelessRpc(server.url, "tasks/get", { taskId: "some-id" }, { meta: null });
    expect(body.error?.code).toBe(-32602);
  });
});

describe("routing headers (X-HTTP-2, X-HTTP-4, X-HTTP-5)", () => {
  it("refuses a request without Mcp-Method with -32020 and HTTP 400", async () => {
    const { status, body } = await statelessRpc(server.url, "tools/list", {}, { headers: { "mcp-method": undefined } });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32020);
  });

  it("refuses an Mcp-Method that names another method with -32020 (X-CONF-10)", async () => {
    const { status, body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "greet", arguments: { name: "x" } },
      { headers: { "mcp-method": "tasks/get" } },
    );
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32020);
  });

  it("refuses a tools/call whose Mcp-Name is not params.name with -32020", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "greet", arguments: { name: "x" } },
      { headers: { "mcp-name": "slow_compute" } },
    );
    expect(body.error?.code).toBe(-32020);
  });

  it("refuses a tools/call without Mcp-Name with -32020", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "greet", arguments: { name: "x" } },
      { headers: { "mcp-name": undefined } },
    );
    expect(body.error?.code).toBe(-32020);
  });

  it("refuses a tasks/get whose Mcp-Name is not params.taskId with -32020 (X-HTTP-1)", async () => {
    const { status, body } = await statelessRpc(server.url, "tasks/get", { taskId: "a" }, { headers: { "mcp-name": "b" } });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32020);
  });

  it("compares a Base64-sentinel Mcp-Name decoded (X-HTTP-5)", async () => {
    const { status, body } = await statelessRpc(
      server.url,
      "tools/call",
      { name: "greet", arguments: { name: "x" } },
      { headers: { "mcp-name": `=?base64?${Buffer.from("greet").toString("base64")}?=` } },
    );
    expect(status).toBe(200);
    expect(body.result?.["resultType"]).toBe("complete");
  });

  it("refuses an MCP-Protocol-Version header that differs from the envelope's version with -32020 (X-HTTP-3)", async () => {
    const { body } = await statelessRpc(
      server.url,
      "tools/list",
      {},
      { meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2025-11-25" } },
    );
    expect(body.error?.code).toBe(-32020);
  });
});

describe("methods", () => {
  it("answers an unknown method with -32601 and HTTP 404 (X-HTTP-6)", async () => {
    // roots/list is a client's method: no server serves it (the fixture server now has resources/list).
    const { status, body } = await statelessRpc(server.url, "roots/list");
    expect(status).toBe(404);
    expect(body.error?.code).toBe(-32601);
  });

  it("answers tasks/result with -32601 (X-LEG-1)", async () => {
    const { status, body } = await statelessRpc(server.url, "tasks/result", { taskId: "tasks-conformance-isolation-probe" });
    expect(status).toBe(404);
    expect(body.error?.code).toBe(-32601);
  });

  it("answers tasks/list with -32601 (X-CONF-8, X-SEC-3)", async () => {
    const { body } = await statelessRpc(server.url, "tasks/list", {});
    expect(body.error?.code).toBe(-32601);
  });

  it("lists the tools with resultType complete and no execution.taskSupport (X-CAP-9, X-LEG-6)", async () => {
    const result = await statelessResult(server.url, "tools/list");
    expect(result["resultType"]).toBe("complete");
    const tools = result["tools"] as Array<Record<string, unknown>>;
    expect(tools.map((tool) => tool["name"])).toEqual(
      expect.arrayContaining(["greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input"]),
    );
    for (const tool of tools) expect(tool).not.toHaveProperty("execution");
  });

  it("answers a plain tools/call inline: the CallToolResult with resultType complete and no taskId (X-CAP-9, X-CONF-11)", async () => {
    const result = await statelessResult(server.url, "tools/call", { name: "greet", arguments: { name: "Luca" } });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "Hello, Luca!" }] });
  });

  it("answers a tools/call of an unknown tool with -32602 and HTTP 400", async () => {
    const { status, body } = await statelessRpc(server.url, "tools/call", { name: "nope", arguments: {} });
    expect(status).toBe(400);
    expect(body.error?.code).toBe(-32602);
  });

  it("accepts a notification with HTTP 202 and no body", async () => {
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", "mcp-protocol-version": V2026, "mcp-method": "notifications/initialized" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized", params: { _meta: envelope() } }),
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("refuses a batch with -32600 and HTTP 400", async () => {
    const response = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", "mcp-protocol-version": V2026, "mcp-method": "tools/list" },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } }]),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});
