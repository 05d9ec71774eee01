/**
 * compose.yaml's cluster, run from the file's own service definitions
 * (test/containers/compose-services.ts): PostgreSQL gating the rest by its `pg_isready` health
 * check, two fronts and a worker from the repository's Dockerfile, and nginx with
 * docs/deploy/nginx.conf. A task created on one front is fetched, and its result read, on the
 * other, and run by the worker (the fronts run no handlers); a task also goes through the balancer.
 * The password reaches the mcp-tasks services as PGPASSWORD, never in the store URL.
 *
 * On the host's network, and with stand-ins for the official postgres and nginx images
 * (test/support/stand-in-images.ts), these are the only changes to the file's definitions:
 * MCP_TASKS_STORE names 127.0.0.1 and PostgreSQL's port instead of the `db` host; PostgreSQL
 * listens on a free port (PGPORT) and each front on its own (PORT); nginx's configuration has
 * the fronts' addresses and its listen port replaced, as test/cluster/balancers.test.ts does.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { freePort } from "../support/free-port.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { loadCompose, startServices, type ComposeFile } from "./compose-services.js";
import { APP_IMAGE, openLab, REPO_ROOT, type Lab } from "./lab.js";

const SETUP_TIMEOUT_MS = 5 * 60_000;

let lab: Lab;
let compose: ComposeFile;
const containers: string[] = [];
const clients: HttpClient[] = [];
const ports = { db: 0, front1: 0, front2: 0, balancer: 0 };

/** Replaces `from` by `to`, insisting it occurs exactly once. */
function replaceOnce(text: string, from: string, to: string): string {
  const parts = text.split(from);
  if (parts.length !== 2) throw new Error(`nginx.conf: expected "${from}" exactly once, found it ${parts.length - 1} times`);
  return parts.join(to);
}

beforeAll(async () => {
  lab = openLab("compose");
  for (const name of Object.keys(ports) as (keyof typeof ports)[]) ports[name] = await freePort();
  const env = {
    POSTGRES_PASSWORD: randomBytes(12).toString("hex"),
    MCP_TASKS_ADMIN_TOKEN: randomBytes(12).toString("hex"),
    MCP_TASKS_STORE: `postgres://mcp@127.0.0.1:${ports.db}/mcp?schema=mcp_tasks`,
  };
  compose = loadCompose(join(REPO_ROOT, "compose.yaml"), env);

  const nginxConf = join(lab.dir, "nginx.conf");
  let conf = readFileSync(join(REPO_ROOT, "docs/deploy/nginx.conf"), "utf8");
  conf = replaceOnce(conf, "front1:3000", `127.0.0.1:${ports.front1}`);
  conf = replaceOnce(conf, "front2:3000", `127.0.0.1:${ports.front2}`);
  conf = replaceOnce(conf, "listen 8080;", `listen 127.0.0.1:${ports.balancer};`);
  writeFileSync(nginxConf, conf);

  const started = Date.now();
  await startServices(
    lab.podman,
    compose,
    lab.prefix,
    {
      image: (_, service) => {
        if (service.build !== undefined) return APP_IMAGE;
        if (/^(postgres|nginx):/.test(service.image ?? "")) return lab.services;
        throw new Error(`no image for ${service.image}`);
      },
      adapt: (name, run) => {
        if (name === "db")
          return { ...run, entrypoint: "/usr/local/bin/postgres-entrypoint.sh", env: { ...run.env, PGPORT: String(ports.db) } };
        if (name === "front1" || name === "front2") return { ...run, env: { ...run.env, PORT: String(ports[name]) } };
        if (name === "balancer") {
          return { ...run, volumes: (run.volumes ?? []).map((v) => v.replace(/^\.\/docs\/deploy\/nginx\.conf:/, `${nginxConf}:`)) };
        }
        return run;
      },
    },
    containers,
  );
  console.log(`[containers] compose services up: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await lab?.podman.remove(...containers);
  await lab?.podman.removeVolumes(`${lab?.prefix}-pgdata`);
  lab?.cleanup();
});

async function connect(port: number): Promise<HttpClient> {
  const c = await connectHttpClient(`http://127.0.0.1:${port}/mcp`);
  clients.push(c);
  return c;
}

const text = (value: string) => [{ type: "text", text: value }];

describe("compose.yaml's cluster", () => {
  it("gates the mcp-tasks services on PostgreSQL's pg_isready health check", () => {
    expect(compose.services["db"]?.healthcheck?.test).toEqual(["CMD", "pg_isready", "-U", "mcp", "-d", "mcp"]);
    for (const name of ["front1", "front2", "worker"]) {
      expect(compose.services[name]?.depends_on).toEqual({ db: { condition: "service_healthy" } });
    }
  });

  it("gives the mcp-tasks services the password as PGPASSWORD, never in the store URL", () => {
    const raw = readFileSync(join(REPO_ROOT, "compose.yaml"), "utf8");
    expect(raw).toContain("postgres://mcp@db:5432/mcp?schema=mcp_tasks");
    for (const name of ["front1", "front2", "worker"]) {
      const service = compose.services[name];
      expect(service?.environment?.["PGPASSWORD"]).toMatch(/^[0-9a-f]{24}$/);
      expect(service?.command?.join(" ")).not.toContain(service?.environment?.["PGPASSWORD"]);
    }
  });

  it("runs a task created on one front to its result, fetched on the other front; the worker runs it", async () => {
    const one = await connect(ports.front1);
    const other = await connect(ports.front2);
    const { task } = await callToolAsTask(one.client, "sleep", { ms: 300 });
    expect(await taskResult(other.client, task.taskId)).toMatchObject({ content: text("slept 300 ms") });
    expect(await getTask(other.client, task.taskId)).toMatchObject({ taskId: task.taskId, status: "completed" });
    expect(await getTask(one.client, task.taskId)).toMatchObject({ status: "completed" });
  });

  it("serves requestors through the balancer", async () => {
    const c = await connect(ports.balancer);
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 100 });
    expect(await taskResult(c.client, task.taskId)).toMatchObject({ content: text("slept 100 ms") });
  });
});
