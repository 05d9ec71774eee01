/**
 * Waiting costs nothing, on real `mcp-tasks serve` processes and a SQLite file, in both eras
 * through TaskClient (docs/durable-execution.md, Waiting): unanswered questions hold no handler
 * slot; a question asked by a process killed with SIGKILL is answered to the next process on the
 * file, which replays the task to its end; a nap outlives its process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { TaskClient } from "../../src/client/task-client.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { CliProcess } from "../support/cli-process.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-waits-eras-"));
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(file: string, ...args: string[]): Promise<{ server: CliProcess; url: string }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--inline-wait-ms", "0", ...args]);
  cleanups.push(async () => void (await server.kill("SIGKILL")));
  return { server, url: await server.url() };
}

const never = (): Promise<never> => new Promise(() => {});

describe.each<ProtocolRevision>(["2025-11-25", "2026-07-28"])("waits under %s", (protocol) => {
  it(
    "with --workers 2, two unanswered questions leave the slots free: a sleep task beside them completes",
    { timeout: 60_000 },
    async () => {
      const { url } = await serve(join(dir, `${protocol}-slots.db`), "--workers", "2");
      // A requestor that can answer questions but leaves them open.
      const asker = await TaskClient.connect(url, { protocol, elicit: never });
      cleanups.push(() => asker.close());
      for (const question of ["first?", "second?"]) {
        const made = await asker.callTool("ask", { question }, { task: true });
        if (made.kind !== "task") throw new Error("expected a task");
        await until(async () => (await made.task.status()).status === "input_required");
      }
      const client = await TaskClient.connect(url, { protocol });
      cleanups.push(() => client.close());
      const started = Date.now();
      const made = await client.callTool("sleep", { ms: 200 }, { task: true });
      if (made.kind !== "task") throw new Error("expected a task");
      expect(await made.task.result()).toMatchObject({ content: [{ type: "text", text: "slept 200 ms" }] });
      expect(Date.now() - started).toBeLessThan(10_000);
    },
  );

  it(
    "a question asked by a process killed with SIGKILL is answered to the next process, which completes the task",
    { timeout: 90_000 },
    async () => {
      const file = join(dir, `${protocol}-kill.db`);
      const first = await serve(file);
      const asker = await TaskClient.connect(first.url, { protocol, elicit: never });
      const made = await asker.callTool("ask", { question: "deploy?" }, { task: true });
      if (made.kind !== "task") throw new Error("expected a task");
      const taskId = made.task.id;
      await until(async () => (await made.task.status()).status === "input_required");
      await first.server.stderr.waitFor(
        (l) => l["taskId"] === taskId && String(l["msg"]).startsWith("task parked"),
        "the task to be parked",
      );
      await asker.close().catch(() => {});
      await first.server.kill("SIGKILL");

      const second = await serve(file);
      const answerer = await TaskClient.connect(second.url, {
        protocol,
        elicit: async () => ({ action: "accept", content: { answer: "yes" } }),
      });
      cleanups.push(() => answerer.close());
      const task = answerer.task(taskId);
      expect(await task.result()).toMatchObject({ content: [{ type: "text", text: "answer: yes" }] });
    },
  );

  it("a nap outlives the process that parked it: the next process completes it when its time comes", { timeout: 90_000 }, async () => {
    const file = join(dir, `${protocol}-nap.db`);
    const first = await serve(file);
    const client = await TaskClient.connect(first.url, { protocol });
    const made = await client.callTool("nap", { ms: 3000 }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    const taskId = made.task.id;
    await first.server.stderr.waitFor((l) => l["taskId"] === taskId && String(l["msg"]).startsWith("task parked"), "the task to be parked");
    const parked = await made.task.status();
    expect(parked.status).toBe("working");
    expect(parked.statusMessage).toMatch(/^Sleeping until /);
    await client.close().catch(() => {});
    await first.server.kill("SIGKILL");

    const second = await serve(file);
    const again = await TaskClient.connect(second.url, { protocol });
    cleanups.push(() => again.close());
    expect(await again.task(taskId).result()).toMatchObject({ content: [{ type: "text", text: expect.stringMatching(/^napped until /) }] });
  });
});

async function until(read: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await read())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
