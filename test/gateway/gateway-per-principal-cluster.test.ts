/**
 * `--upstream-per-principal` on the PostgreSQL cluster, in real processes on a fresh schema: two
 * `gateway --workers 0` fronts with bearer auth for two principals (alice, mallory) and one
 * `worker` with the same upstream flags, in front of a real server-everything over stdio. The
 * fronts run no handlers, so the per-principal processes must be started where the calls run: on
 * the worker, keyed by the owner stored with each task. Each principal's question reaches its
 * owner only (T-SEC-1, T-INPUT), and neither principal can see the other's task (T-SEC).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import type { CliProcess } from "../support/cli-process.js";
import { Balancer, byMethod, Cluster } from "../support/cluster.js";
import { callToolAsTask, expectRpcError, getTask, RELATED_TASK, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { EVERYTHING, eventually, nodeCommand } from "./gateway-fixture.js";

const ALICE = "tok-alice-ppc-3b7e";
const MALLORY = "tok-mallory-ppc-81d4";
const ELICIT = "trigger-elicitation-request";

const dir = mkdtempSync(join(tmpdir(), "gateway-pp-cluster-"));
const tokens = join(dir, "tokens.json");
writeFileSync(tokens, JSON.stringify({ [ALICE]: "alice", [MALLORY]: "mallory" }));

let cluster: Cluster | undefined;
const clients: HttpClient[] = [];
/** Every upstream seen under the cluster's processes, killed at the end whatever happened to their parents. */
const upstreams = new Set<number>();

/** The child processes of `pid` from /proc, as gateway-kill.test.ts reads them. */
function childrenOf(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The server-everything processes under `p` (tsx's esbuild service is a child too: not an upstream). */
function upstreamsOf(p: CliProcess): number[] {
  const pids = childrenOf(p.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("server-everything");
    } catch {
      return false; // gone meanwhile
    }
  });
  for (const pid of pids) upstreams.add(pid);
  return pids;
}

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  if (cluster) for (const p of [...cluster.fronts, ...cluster.workers]) for (const pid of childrenOf(p.pid)) upstreams.add(pid);
  // The upstreams first: they hold their parents' stderr open, and a killed parent is only
  // reaped once its output ends (server-everything does not exit when its stdin closes).
  for (const pid of upstreams) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A principal's client behind a balancer of its own: calls on front 0, results and answers through front 1. */
async function connectAs(token: string): Promise<HttpClient> {
  if (!cluster) throw new Error("no cluster");
  const balancer = new Balancer(cluster.urls);
  balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, response: 1, "tasks/get": 0 });
  const c = await connectHttpClient(balancer.url, { token, fetch: balancer.fetch, capabilities: { elicitation: { form: {} } } });
  clients.push(c);
  return c;
}

describe(
  "gateway --upstream-per-principal on the PostgreSQL cluster (2 fronts, 1 worker, server-everything over stdio)",
  { timeout: 180_000 },
  () => {
    it("runs each principal's task on the worker in an upstream process of its own; each question reaches its owner only", async () => {
      const upstreamFlags = ["--upstream-stdio", nodeCommand(EVERYTHING, "stdio"), "--upstream-per-principal"];
      cluster = await Cluster.start({
        frontCommand: "gateway",
        toolArgs: upstreamFlags,
        frontArgs: ["--auth-tokens", tokens],
        fronts: 2,
        workers: 1,
        startTimeoutMs: 90_000,
      });
      const [worker] = cluster.workers;
      if (!worker) throw new Error("no worker");
      // Before any call: every process has only its own connection (it lists the tools).
      expect(upstreamsOf(worker)).toHaveLength(1);

      const alice = await connectAs(ALICE);
      const mallory = await connectAs(MALLORY);
      const asked: Record<"alice" | "mallory", unknown[]> = { alice: [], mallory: [] };
      let releaseBoth!: () => void;
      const both = new Promise<void>((resolve) => (releaseBoth = resolve));
      for (const [who, c, name] of [
        ["alice", alice, "Alice Liddell"],
        ["mallory", mallory, "Mallory Mallard"],
      ] as const) {
        c.client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked[who].push(request.params._meta?.[RELATED_TASK]);
          await both;
          return { action: "accept", content: { name } };
        });
      }

      const a = await callToolAsTask(alice.client, ELICIT, {});
      const m = await callToolAsTask(mallory.client, ELICIT, {});
      const aliceDone = taskResult(alice.client, a.task.taskId);
      const malloryDone = taskResult(mallory.client, m.task.taskId);
      // Both questions are out before either is answered: on the worker's one shared process the
      // second would be refused (two calls in flight, no telling whose asks).
      await eventually(
        "both questions to be asked",
        async () => (asked.alice.length === 1 && asked.mallory.length === 1 ? true : undefined),
        90_000,
      );
      expect(asked.alice).toEqual([{ taskId: a.task.taskId }]);
      expect(asked.mallory).toEqual([{ taskId: m.task.taskId }]);

      // Both calls ran on the worker, each principal in a process of its own: the worker's own and two more.
      const claimed = (taskId: string) => worker.stderr.filter((l) => l["msg"] === "claimed task" && l["taskId"] === taskId).length;
      expect(claimed(a.task.taskId)).toBe(1);
      expect(claimed(m.task.taskId)).toBe(1);
      const pids = upstreamsOf(worker);
      expect(pids).toHaveLength(3);
      expect(new Set(pids).size).toBe(3);
      const started = worker.stderr.filter((l) => l["msg"] === "started an upstream process for a principal").map((l) => l["principal"]);
      expect(started.sort()).toEqual(["owner:local|alice", "owner:local|mallory"]);
      // The fronts started none: they only list the tools.
      for (const front of cluster.fronts) {
        expect(upstreamsOf(front)).toHaveLength(1);
        expect(front.stderr.filter((l) => l["msg"] === "started an upstream process for a principal")).toEqual([]);
      }

      // Owner binding (T-SEC): neither principal can reach the other's task, through either front.
      expect((await getTask(alice.client, a.task.taskId)).status).toBe("input_required");
      await expectRpcError(getTask(mallory.client, a.task.taskId), -32602);
      await expectRpcError(getTask(alice.client, m.task.taskId), -32602);
      await expectRpcError(taskResult(mallory.client, a.task.taskId), -32602);

      releaseBoth();
      const aliceResult = JSON.stringify((await aliceDone).content);
      const malloryResult = JSON.stringify((await malloryDone).content);
      expect(aliceResult).toContain("Alice Liddell");
      expect(aliceResult).not.toContain("Mallory");
      expect(malloryResult).toContain("Mallory Mallard");
      expect(malloryResult).not.toContain("Alice");
      // Each question was asked once, of its owner only.
      expect(asked.alice).toHaveLength(1);
      expect(asked.mallory).toHaveLength(1);
      expect(alice.errors).toEqual([]);
      expect(mallory.errors).toEqual([]);
    });
  },
);
