/**
 * kill -9 of the gateway under load: a gateway on a SQLite file in front of
 * a real stdio upstream is SIGKILLed while tasks run, restarted on the same file, and judged as
 * the reliability suite judges a server (test/reliability/sqlite-kill.test.ts): every task whose
 * CreateTaskResult arrived is known afterwards and terminal with the result its arguments imply
 * (T-NEW, T-RES) — a task running at the crash is re-attached to its upstream task (the demo
 * server runs its tools as tasks of its own, on a file of its own) and ends as the upstream's
 * recovery says (`sleep`: failed saying the server stopped, or completed; `steps`: completed). And the stdio upstream dies with the killed gateway
 * (src/gateway/upstream-lifetime.ts) rather than outliving it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { BIN, CliProcess } from "../support/cli-process.js";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession } from "../support/reliability/raw-session.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { LOAD_LIMITS } from "../support/reliability/sqlite-server.js";
import { EVERYTHING, eventually, nodeCommand } from "./gateway-fixture.js";

const scratch = scratchDirPerTest();

/** `mcp-tasks gateway` on `file` in front of `upstream`, no web view, the load's limits out of the way. */
async function startGateway(
  file: string,
  upstream: string,
  config: object,
): Promise<{ gateway: CliProcess; url: string; upstreamPid: () => number }> {
  const configFile = join(scratch(), "gateway.json");
  writeFileSync(configFile, JSON.stringify(config));
  const gateway = CliProcess.spawn([
    "gateway",
    "--store",
    `sqlite:${file}`,
    "--port",
    "0",
    "--no-web",
    ...LOAD_LIMITS,
    "--config",
    configFile,
    "--upstream-stdio",
    upstream,
  ]);
  // The gateway listens once its upstream is connected and listed: two tsx start-ups on a loaded machine.
  const url = await gateway.url(90_000);
  return { gateway, url, upstreamPid: () => upstreamOf(gateway) };
}

/** The pid of the gateway's one child process (its stdio upstream), from /proc. */
function upstreamOf(gateway: CliProcess): number {
  const children = readChildren(gateway.pid);
  expect(children).toHaveLength(1);
  return children[0] as number;
}

function readChildren(pid: number): number[] {
  const path = `/proc/${pid}/task/${pid}/children`;
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * SIGKILLs `cli` and waits for its exit — not for its output to close ({@link CliProcess.kill}):
 * an orphaned upstream would hold the gateway's stderr open, and this test is to fail, not hang.
 */
function kill9(cli: CliProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    cli.child.once("exit", (_code, signal) => resolve(signal));
    cli.child.kill("SIGKILL");
  });
}

/** The tool each of `taskIds` called, as the gateway's SQLite file holds it (read through a connection of its own). */
function toolsOf(file: string, taskIds: string[]): Array<string | undefined> {
  const db = new Database(file, { readonly: true });
  try {
    const name = db.prepare<[string], { name: string }>("SELECT name FROM tasks WHERE id = ?");
    return taskIds.map((id) => name.get(id)?.name);
  } finally {
    db.close();
  }
}

/** Whether `pid` still runs: neither gone nor a zombie (this machine's init may be slow to reap an orphan). */
function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.charAt(0);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

describe("gateway: kill -9 under load, restart on the same SQLite file", { timeout: 240_000 }, () => {
  it("demo server over stdio: loses no acknowledged task, leaves none stuck or wrong, and the restarted gateway takes new load", async () => {
    const file = join(scratch(), "gateway.db");
    // The demo server is a task server itself, so the gateway follows upstream tasks and
    // re-attaches to them after its restart: the upstream keeps them in a file of its own (a
    // task-server upstream on a memory store loses them, and the gateway says so). Its drain on
    // the SIGTERM it gets when the gateway dies is kept short, so the next upstream finds the
    // file free soon.
    const upstream = nodeCommand(
      BIN,
      "serve",
      "--stdio",
      "--demo",
      "--store",
      `sqlite:${join(scratch(), "upstream.db")}`,
      "--drain-timeout",
      "1000",
      ...LOAD_LIMITS,
    );
    const config = { tools: { steps: { recovery: "retry" } } };
    const first = await startGateway(file, upstream, config);
    const firstUpstream = first.upstreamPid();
    const load = new LoadGenerator({ url: first.url, concurrency: 6 }).start();
    await until(3_000);
    const before = load.ledger.acknowledged.length;
    expect(await kill9(first.gateway)).toBe("SIGKILL");
    await eventually("the killed gateway's upstream to exit", async () => (alive(firstUpstream) ? undefined : true), 10_000);

    const second = await startGateway(file, upstream, config);
    load.retarget(second.url);
    await until(3_000);
    await load.stop();

    const verdict = await expectNothingLost(load.ledger, second.url);
    expect(before).toBeGreaterThan(0);
    expect(load.ledger.acknowledged.length).toBeGreaterThan(before); // the restarted gateway took load too
    expect(verdict.completed + verdict.failedSaidWhy).toBe(verdict.acknowledged);
    expect(load.echoes.wrong).toBe(0);
    // The kill caught tasks running: `sleep`s failed saying why, `steps` re-run (and, judged above, completed right).
    // Only `steps` re-runs — also a task whose creation the kill cut off before its answer (in
    // doubt, so not in the ledger), hence the tool names read from the gateway's own file.
    const rerun = second.gateway.stderr.items.filter((l) => l["audit"] === "rerun").map((l) => String(l["taskId"]));
    expect(toolsOf(file, rerun)).toEqual(rerun.map(() => "steps"));
    expect(rerun.length + verdict.failedSaidWhy).toBeGreaterThan(0);
    console.log(
      `gateway kill -9 (demo upstream): ${JSON.stringify({ ...verdict, before, rerun: rerun.length, inDoubt: load.inDoubt, echoes: load.echoes })}`,
    );
  });

  it("server-everything over stdio: the upstream dies with the gateway; finished results survive, running tasks fail saying why", async () => {
    const file = join(scratch(), "gateway.db");
    const upstream = nodeCommand(EVERYTHING, "stdio");
    const first = await startGateway(file, upstream, {});
    const upstreamPid = first.upstreamPid();
    const session = await RawSession.open(first.url);
    const LONG = "trigger-long-running-operation";
    const create = async (duration: number, steps: number): Promise<string> => {
      const created = await session.request("tools/call", { name: LONG, arguments: { duration, steps }, task: { ttl: 3_600_000 } });
      return (created["task"] as { taskId: string }).taskId;
    };
    // Lighter load: short operations that finish before the kill, long ones running through it.
    // A long one in a single step writes nothing until it ends: that is what keeps an orphaned
    // server-everything alive (it ignores the end of its stdin, and no write fails with EPIPE).
    const short = await Promise.all([0.2, 0.3, 0.4].map((d) => create(d, 2)));
    const long = await Promise.all([300, 301, 302].map((d) => create(d, 1)));
    for (const taskId of short)
      await eventually(
        `${taskId} to complete`,
        async () => ((await session.request("tasks/get", { taskId }))["status"] === "completed" ? true : undefined),
        30_000,
      );
    for (const taskId of long) expect((await session.request("tasks/get", { taskId }))["status"]).toBe("working");

    const killedAt = Date.now();
    expect(await kill9(first.gateway)).toBe("SIGKILL");
    // Without upstream-lifetime.ts server-everything runs on until its operations end (minutes).
    try {
      await eventually("the killed gateway's upstream to exit", async () => (alive(upstreamPid) ? undefined : true), 5_000);
    } finally {
      if (alive(upstreamPid)) process.kill(upstreamPid, "SIGKILL");
    }
    console.log(`server-everything (pid ${upstreamPid}) gone ${Date.now() - killedAt} ms after kill -9 of its gateway`);

    const second = await startGateway(file, upstream, {});
    const after = await RawSession.open(second.url);
    for (const [i, taskId] of short.entries()) {
      const result = await after.request("tasks/result", { taskId });
      expect(result["content"]).toEqual([
        { type: "text", text: `Long running operation completed. Duration: ${[0.2, 0.3, 0.4][i]} seconds, Steps: 2.` },
      ]);
    }
    for (const taskId of long) {
      const task = await after.request("tasks/get", { taskId });
      expect(task["status"]).toBe("failed");
      expect(task["statusMessage"]).toMatch(/server stopped while this task was running/);
    }
    // The restarted gateway serves new work through its new upstream.
    const next = await after.request("tools/call", { name: "echo", arguments: { message: "after the crash" } });
    expect(next["content"]).toEqual([{ type: "text", text: "Echo: after the crash" }]);
    expect(second.upstreamPid()).not.toBe(upstreamPid);
    await after.close();
  });
});
