/**
 * Browsers and DNS rebinding, against real `serve` and `gateway` processes: every request whose
 * Origin is not loopback, the server's own or one of `--allowed-origins` is refused with HTTP 403
 * and a JSON-RPC error before anything handles it (T-HTTP-1) — on /mcp in both eras (POST, GET,
 * DELETE, the plain-JSON path), on the web view's API and event stream, and on a gateway's front;
 * on a loopback bind the Host header must name a loopback address, so a rebound name is refused
 * whatever Origin it comes with.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, CliProcess, killAll, runCli } from "../support/cli-process.js";
import { envelope, V2026 } from "../support/stateless-client.js";

const ADMIN = "origin-check-admin-token";
const EVIL = "http://evil.example";
const ALLOWED = "https://tasks.example.com";

interface Answer {
  status: number;
  contentType: string | undefined;
  sessionId: string | undefined;
  /** The body, read whole; for an event stream only its head is read ("" here). */
  text: string;
}

/**
 * One HTTP request with exactly the headers given — Host and Origin included, as a browser on a
 * rebound name sends them, which fetch does not allow. An event stream's answer is closed once its
 * head arrived.
 */
function send(base: URL, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) },
      },
      (res) => {
        const contentType = res.headers["content-type"];
        const sessionId = res.headers["mcp-session-id"] as string | undefined;
        if (contentType?.includes("text/event-stream") && method === "GET") {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType, sessionId, text: "" });
          return;
        }
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType, sessionId, text }));
      },
    );
    req.on("error", reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The answer is the refusal: 403 with a JSON-RPC error naming the header. */
function expectRefused(answer: Answer, header: "Origin" | "Host"): void {
  expect(answer.status).toBe(403);
  const body = JSON.parse(answer.text) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
  expect(body.error.message).toContain(`Invalid ${header} header`);
}

/** Every task the server holds, through the web view's API as admin (era-neutral). */
async function taskCount(base: URL): Promise<number> {
  const answer = await send(base, "GET", "/tasks/api/tasks?limit=100", { host: base.host, authorization: `Bearer ${ADMIN}` });
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.text) as { tasks: unknown[] }).tasks.length;
}

async function startServe(args: string[]): Promise<URL> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--admin-token", ADMIN, ...args]);
  return new URL(await server.url());
}

// ---- the protocol eras, as one table ----

const PROTOCOL_2025 = "2025-11-25";

/** What the requests of an era need: a 2025-11-25 session's id, none in 2026-07-28. */
interface EraContext {
  sessionId?: string;
}

interface EraRequest {
  name: string;
  /** Sends the request with these extra headers (Origin, Host); the answer's status when served. */
  send(base: URL, ctx: EraContext, headers: Record<string, string>): Promise<Answer>;
  served: number;
}

interface EraCase {
  name: "2025-11-25" | "2026-07-28";
  /** Opens what the era's requests run in, with plain headers (no Origin). */
  open(base: URL): Promise<EraContext>;
  /** Requests to /mcp, each refused or served on its Origin alone. */
  requests: EraRequest[];
  /** A request that creates a task (the rebinding page's goal). */
  createTask: EraRequest;
  /** The first request a rebound page sends (2025-11-25: initialize; 2026-07-28: the call itself). */
  firstRequest: EraRequest;
  /** Whether the era has sessions a DELETE ends. */
  sessions: boolean;
}

let nextId = 1;
const rpc = (method: string, params: Record<string, unknown>): Record<string, unknown> => ({
  jsonrpc: "2.0",
  id: nextId++,
  method,
  params,
});

const session2025 = (
  ctx: EraContext,
  headers: Record<string, string>,
  accept = "application/json, text/event-stream",
): Record<string, string> => ({
  accept,
  "mcp-protocol-version": PROTOCOL_2025,
  ...(ctx.sessionId !== undefined && { "mcp-session-id": ctx.sessionId }),
  ...headers,
});

const initialize2025: EraRequest = {
  name: "POST initialize",
  served: 200,
  send: (base, _ctx, headers) =>
    send(
      base,
      "POST",
      "/mcp",
      { accept: "application/json, text/event-stream", ...headers },
      rpc("initialize", { protocolVersion: PROTOCOL_2025, capabilities: {}, clientInfo: { name: "origin-check", version: "1.0.0" } }),
    ),
};

const call2025: EraRequest = {
  name: "POST tools/call (a task)",
  served: 200,
  send: (base, ctx, headers) =>
    send(
      base,
      "POST",
      "/mcp",
      session2025(ctx, headers),
      rpc("tools/call", { name: "sleep", arguments: { ms: 1 }, task: { ttl: 60_000 } }),
    ),
};

const headers2026 = (method: string, name: string | undefined, headers: Record<string, string>): Record<string, string> => ({
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": V2026,
  "mcp-method": method,
  ...(name !== undefined && { "mcp-name": name }),
  ...headers,
});

const call2026: EraRequest = {
  name: "POST tools/call (a task)",
  served: 200,
  send: (base, _ctx, headers) =>
    send(
      base,
      "POST",
      "/mcp",
      headers2026("tools/call", "sleep", headers),
      rpc("tools/call", { name: "sleep", arguments: { ms: 1 }, _meta: envelope() }),
    ),
};

const ERAS: readonly EraCase[] = [
  {
    name: "2025-11-25",
    sessions: true,
    async open(base) {
      const init = await initialize2025.send(base, {}, { host: base.host });
      expect(init.status).toBe(200);
      const ctx = { sessionId: init.sessionId as string };
      const initialized = await send(base, "POST", "/mcp", session2025(ctx, { host: base.host }), {
        jsonrpc: "2.0",
        method: "notifications/initialized",
      });
      expect(initialized.status).toBe(202);
      return ctx;
    },
    requests: [
      call2025,
      {
        name: "POST tasks/list (the plain-JSON path)",
        served: 200,
        send: (base, ctx, headers) => send(base, "POST", "/mcp", session2025(ctx, headers, "application/json"), rpc("tasks/list", {})),
      },
      {
        name: "GET (the session's stream)",
        served: 200,
        send: (base, ctx, headers) => send(base, "GET", "/mcp", session2025(ctx, headers, "text/event-stream")),
      },
      {
        name: "DELETE (the session's end)",
        served: 200,
        send: (base, ctx, headers) => send(base, "DELETE", "/mcp", session2025(ctx, headers)),
      },
    ],
    createTask: call2025,
    firstRequest: initialize2025,
  },
  {
    name: "2026-07-28",
    sessions: false,
    open: async () => ({}),
    requests: [
      call2026,
      {
        name: "POST server/discover",
        served: 200,
        send: (base, _ctx, headers) =>
          send(base, "POST", "/mcp", headers2026("server/discover", undefined, headers), rpc("server/discover", { _meta: envelope() })),
      },
    ],
    createTask: call2026,
    firstRequest: call2026,
  },
];

afterAll(async () => {
  await killAll();
});

describe("a server on the default loopback bind, with --allowed-origins", { timeout: 60_000 }, () => {
  let base: URL;
  beforeAll(async () => {
    base = await startServe(["--allowed-origins", `${ALLOWED}, http://other.example:8080`]);
  }, 60_000);

  describe.each(ERAS)("/mcp under $name (T-HTTP-1)", (era) => {
    for (const origin of [EVIL, "null", "http://127.0.0.1.evil.example", "https://tasks.example.com:8443"]) {
      for (const req of era.requests) {
        it(`refuses ${req.name} from Origin ${origin} with 403 and a JSON-RPC error`, async () => {
          const ctx = await era.open(base);
          expectRefused(await req.send(base, ctx, { host: base.host, origin }), "Origin");
        });
      }
    }

    for (const [what, originOf] of [
      ["no Origin (a client that is no browser)", () => undefined],
      ["a loopback Origin", () => "http://localhost:5173"],
      ["the server's own Origin", (at: URL) => at.origin],
      ["an Origin named by --allowed-origins", () => ALLOWED],
    ] as const) {
      for (const req of era.requests) {
        it(`serves ${req.name} from ${what}`, async () => {
          const ctx = await era.open(base);
          const origin = originOf(base);
          const answer = await req.send(base, ctx, { host: base.host, ...(origin !== undefined && { origin }) });
          expect(answer.status).toBe(req.served);
        });
      }
    }

    it("creates no task for a refused call, and one for the same call without the Origin", async () => {
      const ctx = await era.open(base);
      const before = await taskCount(base);
      expectRefused(await era.createTask.send(base, ctx, { host: base.host, origin: EVIL }), "Origin");
      expect(await taskCount(base)).toBe(before);
      expect((await era.createTask.send(base, ctx, { host: base.host })).status).toBe(200);
      expect(await taskCount(base)).toBe(before + 1);
    });

    if (era.sessions) {
      it("keeps the session open after a refused DELETE", async () => {
        const ctx = await era.open(base);
        const remove = era.requests.find((r) => r.name.startsWith("DELETE"));
        expectRefused(await remove!.send(base, ctx, { host: base.host, origin: EVIL }), "Origin");
        const list = era.requests.find((r) => r.name.startsWith("POST tasks/list"));
        expect((await list!.send(base, ctx, { host: base.host })).status).toBe(200);
      });
    }
  });

  describe("the web view", () => {
    const admin = { authorization: `Bearer ${ADMIN}` };

    it("refuses its API from a foreign Origin with 403, even with the admin token", async () => {
      expectRefused(await send(base, "GET", "/tasks/api/tasks", { host: base.host, origin: EVIL, ...admin }), "Origin");
      expectRefused(await send(base, "POST", "/tasks/api/cancel", { host: base.host, origin: EVIL, ...admin }, { ids: [] }), "Origin");
    });

    it("refuses its event stream from a foreign Origin with 403", async () => {
      expectRefused(await send(base, "GET", "/tasks/api/events", { host: base.host, origin: EVIL, ...admin }), "Origin");
    });

    it("serves its API and event stream to its own page (a loopback Origin) and to an allowed Origin", async () => {
      for (const origin of [`http://127.0.0.1:${base.port}`, ALLOWED]) {
        expect((await send(base, "GET", "/tasks/api/tasks", { host: base.host, origin, ...admin })).status).toBe(200);
        expect((await send(base, "GET", "/tasks/api/events", { host: base.host, origin, ...admin })).status).toBe(200);
      }
    });
  });
});

describe("a server bound to another loopback address (127.0.0.2), reached through a rebound name", { timeout: 60_000 }, () => {
  let base: URL;
  let rebound: Record<string, string>;
  beforeAll(async () => {
    base = await startServe(["--host", "127.0.0.2"]);
    rebound = { host: `rebind.evil.example:${base.port}`, origin: `http://rebind.evil.example:${base.port}` };
  }, 60_000);

  describe.each(ERAS)("under $name", (era) => {
    it("refuses the rebound page's first request with 403, and no task is created", async () => {
      const before = await taskCount(base);
      expectRefused(await era.firstRequest.send(base, {}, rebound), "Host");
      expect(await taskCount(base)).toBe(before);
    });

    it("serves the same request under its own address", async () => {
      const ctx = await era.open(base);
      expect((await era.createTask.send(base, ctx, { host: base.host, origin: `http://${base.host}` })).status).toBe(200);
    });
  });

  it("refuses the web view's page and API under a rebound Host, with no Origin at all", async () => {
    const host = { host: rebound["host"] as string };
    expectRefused(await send(base, "GET", "/tasks", host), "Host");
    expectRefused(await send(base, "GET", "/tasks/api/tasks", { ...host, authorization: `Bearer ${ADMIN}` }), "Host");
  });
});

describe("a gateway's front", { timeout: 60_000 }, () => {
  let base: URL;
  beforeAll(async () => {
    const upstream = [process.execPath, BIN, "serve", "--stdio", "--demo", "--store", "memory"].map((w) => JSON.stringify(w)).join(" ");
    const gateway = CliProcess.spawn(["gateway", "--port", "0", "--store", "memory", "--no-web", "--upstream-stdio", upstream]);
    base = new URL(await gateway.url(40_000));
  }, 60_000);

  for (const era of ERAS) {
    it(`refuses the first request of ${era.name} from a foreign Origin with 403 (T-HTTP-1), and serves it without one`, async () => {
      expectRefused(await era.firstRequest.send(base, {}, { host: base.host, origin: EVIL }), "Origin");
      expect((await era.firstRequest.send(base, {}, { host: base.host })).status).toBe(200);
    });
  }
});

describe("a server bound to every address (0.0.0.0, as in a container)", { timeout: 60_000 }, () => {
  let base: URL;
  beforeAll(async () => {
    const url = await startServe(["--host", "0.0.0.0", "--allowed-origins", ALLOWED]);
    base = new URL(`http://127.0.0.1:${url.port}`);
  }, 60_000);

  describe.each(ERAS)("under $name", (era) => {
    it("refuses a rebound page whose Origin matches its Host: the Host alone proves nothing (T-HTTP-1)", async () => {
      const rebound = { host: `rebind.evil.example:${base.port}`, origin: `http://rebind.evil.example:${base.port}` };
      expectRefused(await era.firstRequest.send(base, {}, rebound), "Origin");
    });

    it("serves the public origin named by --allowed-origins, under the name a proxy passes on", async () => {
      expect((await era.firstRequest.send(base, {}, { host: "tasks.example.com", origin: ALLOWED })).status).toBe(200);
    });
  });
});

describe("--allowed-origins", { timeout: 30_000 }, () => {
  it("refuses a value that is not an origin at start-up, naming it (exit 2)", async () => {
    const run = await runCli(["serve", "--demo", "--store", "memory", "--port", "0", "--allowed-origins", "https://tasks.example.com/mcp"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('not "https://tasks.example.com/mcp"');
  });
});
