/**
 * Idempotent creation across processes (SEP-3182, docs/idempotency.md): the key is unique
 * in the store, not in a process, so it holds across the fronts of a PostgreSQL cluster and
 * across a kill -9 and restart of a SQLite server — in both eras.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { CliProcess, killAll } from "../support/cli-process.js";
import { Cluster } from "../support/cluster.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { pgQuery } from "../support/postgres.js";
import { statelessRpc } from "../support/stateless-client.js";

const ANY = z.looseObject({});

/** One era's keyed call of `sleep` as a task on one front; resolves to the taskId it answers with. */
interface Era {
  name: string;
  open(url: string): Promise<(key: string, ms: number) => Promise<string>>;
}

const clients: HttpClient[] = [];

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    open: async (url) => {
      const connection = await connectHttpClient(url, { capabilities: { tasks: {} } });
      clients.push(connection);
      return async (key, ms) => {
        const answer = await connection.client.request(
          { method: "tools/call", params: { name: "sleep", arguments: { ms }, task: {}, idempotencyKey: key } },
          ANY,
        );
        return String((answer["task"] as { taskId: string }).taskId);
      };
    },
  },
  {
    name: "2026-07-28",
    open: async (url) => async (key, ms) => {
      const { body } = await statelessRpc(url, "tools/call", { name: "sleep", arguments: { ms }, idempotencyKey: key });
      if (body.error) throw new Error(JSON.stringify(body.error));
      return String(body.result?.["taskId"] ?? (body.result?.["task"] as { taskId: string }).taskId);
    },
  },
];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
});

describe.each(ERAS)("idempotent creation across processes ($name)", (era) => {
  it("20 concurrent identical keyed creations, 10 to each front of a 2-front cluster: one task, claimed and run once", async () => {
    const cluster = await Cluster.start({ fronts: 2, workers: 1, logLevel: "info" });
    try {
      const calls = await Promise.all(cluster.urls.map((url) => era.open(url)));
      const key = `order-${era.name}`;
      const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => calls[i % 2]!(key, 2500)));
      expect(new Set(ids).size).toBe(1);
      const id = ids[0]!;
      // The worker's claim counts each run: one task in the schema, started once, and it completes.
      await expect
        .poll(async () => (await pgQuery(`SELECT status FROM ${cluster.schema}.tasks WHERE id = $1`, [id])).rows[0]?.["status"], {
          timeout: 10_000,
        })
        .toBe("completed");
      const rows = (await pgQuery(`SELECT id, attempts FROM ${cluster.schema}.tasks`)).rows;
      expect(rows).toEqual([{ id, attempts: 1 }]);
    } finally {
      await cluster.stop();
    }
  }, 90_000);

  it("a kill -9 of the server between two retries of one key: still one task after the restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-idem-restart-"));
    const file = join(dir, "t.db");
    try {
      const first = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--no-web"]);
      const before = await (await era.open(await first.url()))("deploy-7", 60_000);
      expect(await first.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
      for (const c of clients.splice(0)) await c.close().catch(() => {});
      const second = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--no-web"]);
      const after = await (await era.open(await second.url()))("deploy-7", 60_000);
      expect(after).toBe(before);
      await second.kill("SIGKILL");
      const db = new Database(file, { readonly: true });
      try {
        expect(db.prepare("SELECT id FROM tasks").all()).toEqual([{ id: before }]);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
