/**
 * The image the repository's Dockerfile builds, run as an operator runs it: its default command
 * (`serve` with the demo tools, bound for a container, the SQLite file in the /data volume), on
 * the Node stand-in base (test/support/stand-in-images.ts). It answers MCP `initialize` and runs a
 * task; a container killed with SIGKILL and a new one on the same volume still has the task's
 * result; the process runs as a user other than root; its HEALTHCHECK turns healthy; the label the
 * MCP Registry reads names the server; a browser page of a foreign origin is refused (T-HTTP-1).
 * The container's port is a port of the host (`--network host`): PORT picks it, as in any run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { freePort } from "../support/free-port.js";
import { connectHttpClient, rawPost, type HttpClient } from "../support/http-fixture.js";
import { APP_IMAGE, openLab, REPO_ROOT, type Lab } from "./lab.js";

const STEP_TIMEOUT_MS = 120_000;

let lab: Lab;
let volume: string;
let port: number;
const containers: string[] = [];
const clients: HttpClient[] = [];

beforeAll(async () => {
  lab = openLab("image");
  volume = `${lab.prefix}-data`;
  port = await freePort();
});

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await lab?.podman.remove(...containers);
  await lab?.podman.removeVolumes(volume);
  lab?.cleanup();
});

/** A container of the image with its default command, on the shared volume, listening on `port`. */
async function startServer(env: Record<string, string> = {}): Promise<string> {
  const name = `${lab.prefix}-${containers.length + 1}`;
  containers.push(name);
  await lab.podman.start({ name, image: APP_IMAGE, env: { PORT: String(port), ...env }, volumes: [`${volume}:/data`] });
  await lab.podman.waitHealthy(name, 60_000);
  return name;
}

async function connect(): Promise<HttpClient> {
  const c = await connectHttpClient(`http://127.0.0.1:${port}/mcp`);
  clients.push(c);
  return c;
}

const text = (value: string) => [{ type: "text", text: value }];

/** An `initialize` POSTed as a browser page of `origin` would send it. */
function initializeFrom(origin: string) {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "page", version: "0" } },
  };
  return rawPost(`http://127.0.0.1:${port}/mcp`, initialize, { origin });
}

describe("the image, run with its default command", { timeout: STEP_TIMEOUT_MS }, () => {
  let first: string;
  let taskId: string;

  it("turns healthy: its HEALTHCHECK polls /healthz", async () => {
    first = await startServer();
    expect(await lab.podman.inspect(first, "{{.State.Health.Status}}")).toBe("healthy");
    expect(await lab.podman.inspect(first, "{{json .Config.Healthcheck.Test}}")).toContain("/healthz");
  });

  it("answers MCP initialize with the tasks capability and runs a task to its result", async () => {
    const c = await connect();
    expect(c.client.getServerVersion()?.name).toBe("mcp-tasks");
    expect(c.client.getServerCapabilities()?.tasks).toBeDefined();
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 200 });
    taskId = task.taskId;
    expect(await taskResult(c.client, taskId)).toMatchObject({ content: text("slept 200 ms") });
  });

  it("runs as the unprivileged user 10001, which owns the SQLite file in /data", async () => {
    expect(await lab.podman.inspect(first, "{{.Config.User}}")).toBe("10001:10001");
    const uids = await lab.podman.run([
      "exec",
      first,
      "node",
      "-e",
      "const fs = require('node:fs'); console.log(fs.statSync('/proc/1').uid, process.getuid(), fs.statSync('/data/tasks.db').uid)",
    ]);
    expect(uids.trim()).toBe("10001 10001 10001");
  });

  it("carries the io.modelcontextprotocol.server.name label server.json names", async () => {
    const server = JSON.parse(readFileSync(join(REPO_ROOT, "server.json"), "utf8")) as { name: string };
    const label = await lab.podman.inspect(first, '{{index .Config.Labels "io.modelcontextprotocol.server.name"}}');
    expect(label).toBe(server.name);
  });

  it("bound to every address, still refuses a browser page of a foreign origin (HTTP 403), and serves a loopback one (T-HTTP-1)", async () => {
    expect((await initializeFrom("https://evil.example")).status).toBe(403);
    expect((await initializeFrom(`http://localhost:${port}`)).status).toBe(200);
  });

  it("keeps the task's result across a kill -9 of the container: a new container on the same volume answers it", async () => {
    await lab.podman.run(["kill", "--signal", "KILL", first]);
    expect(await lab.podman.inspect(first, "{{.State.Running}}")).toBe("false");
    await lab.podman.remove(first);
    // The new container also names a public origin of the web view, as an operator would.
    await startServer({ MCP_TASKS_ALLOWED_ORIGINS: "https://tasks.example.test" });
    const c = await connect();
    expect(await getTask(c.client, taskId)).toMatchObject({ taskId, status: "completed" });
    expect(await taskResult(c.client, taskId)).toMatchObject({ content: text("slept 200 ms") });
  });

  it("serves browser pages of the origins MCP_TASKS_ALLOWED_ORIGINS names, and still no others", async () => {
    expect((await initializeFrom("https://tasks.example.test")).status).toBe(200);
    expect((await initializeFrom("https://evil.example")).status).toBe(403);
  });
});
