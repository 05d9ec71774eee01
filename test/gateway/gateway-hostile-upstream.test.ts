/**
 * A real `mcp-tasks gateway` shared by two bearer principals, alice and bob, in front of a hostile
 * task server over stdio (fixtures/hostile-task-upstream.mjs) that hands one task id to two calls,
 * asks questions naming another call's task or none, and sends status about another call's task.
 * Whatever it does, one principal's upstream question, status and result never reach the other's
 * task (T-SEC-1, T-INPUT-2): in both eras of the gateway's front, from one table of cases.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TaskClient, type ToolTask } from "../../src/client/task-client.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import type { TaskOutcome } from "../../src/mcp/requestor/remote-task-info.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { killAll, REPO_ROOT } from "../support/cli-process.js";
import { closeClients, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const HOSTILE_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/hostile-task-upstream.mjs");
const ALICE = "tok-alice-hostile-7b2e";
const BOB = "tok-bob-hostile-51c9";

const dir = mkdtempSync(join(tmpdir(), "gateway-hostile-"));
let gateway: GatewayProcess;
const open: TaskClient[] = [];

beforeAll(async () => {
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ [ALICE]: "alice", [BOB]: "bob" }));
  // --inline-wait-ms 0: under 2026-07-28 a call as a task is answered with its task at once.
  gateway = await startGateway([
    "--store",
    "memory",
    "--auth-tokens",
    tokens,
    "--poll-interval",
    "100",
    "--inline-wait-ms",
    "0",
    "--upstream-stdio",
    nodeCommand(HOSTILE_UPSTREAM),
  ]);
}, 60_000);

afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => {});
  await closeClients();
});

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A principal's requestor: the questions it was asked, answered with its name once released. */
interface Caller {
  tasks: TaskClient;
  asked: string[];
  release(): void;
}

async function caller(protocol: ProtocolRevision, token: string, name: string, options: { hold?: boolean } = {}): Promise<Caller> {
  const asked: string[] = [];
  let release!: () => void;
  const released = options.hold ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  release ??= () => {};
  const tasks = await TaskClient.connect(gateway.url, {
    protocol,
    token,
    defaultPollIntervalMs: 100,
    elicit: async (params) => {
      asked.push(params.message);
      await released;
      return { action: "accept", content: { name } };
    },
  });
  open.push(tasks);
  return { tasks, asked, release };
}

async function ask(who: Caller, args: Record<string, unknown>): Promise<ToolTask> {
  const call = await who.tasks.callTool("ask", args, { task: true });
  if (call.kind !== "task") throw new Error("expected a task");
  return call.task;
}

function text(outcome: TaskOutcome<CallToolResult>): string {
  if (!("result" in outcome)) throw new Error(`the task ended without a result: ${outcome.status} ${outcome.error.message}`);
  return JSON.stringify(outcome.result.content);
}

const FRONT_ERAS: ReadonlyArray<{ name: ProtocolRevision }> = [{ name: "2025-11-25" }, { name: "2026-07-28" }];

interface Case {
  name: string;
  run(protocol: ProtocolRevision, id: (name: string) => string): Promise<void>;
}

const CASES: Case[] = [
  {
    name: "refuses a call the upstream answers with another principal's task id: it fails naming the upstream's misbehaviour, and never gets that task's question or result",
    async run(protocol, id) {
      const alice = await caller(protocol, ALICE, "Alice", { hold: true });
      const bob = await caller(protocol, BOB, "Bob");
      const a = await ask(alice, { taskId: id("shared"), question: "alice's question", secret: "alice's result" });
      const aliceDone = a.outcome();
      await eventually("alice to be asked", async () => (alice.asked.length > 0 ? true : undefined));
      const b = await ask(bob, { taskId: id("shared"), question: "bob's question", secret: "bob's result" });
      const bobOutcome = await b.outcome();
      expect(bobOutcome.status).toBe("failed");
      expect("error" in bobOutcome && bobOutcome.error.message).toMatch(
        /answered tools\/call ask with the task of another call \(it gave one task ID to two calls\)/,
      );
      expect((await b.status()).statusMessage).toMatch(/the task of another call/);
      alice.release();
      expect(text(await aliceDone)).toContain('alice\'s result | answer: {\\"name\\":\\"Alice\\"}');
      expect(alice.asked).toEqual(["alice's question"]);
      expect(bob.asked).toEqual([]);
    },
  },
  {
    name: "refuses the upstream a question naming an upstream task no call follows (another principal's, ended), rather than asking the call in flight",
    async run(protocol, id) {
      const alice = await caller(protocol, ALICE, "Alice");
      const bob = await caller(protocol, BOB, "Bob");
      const ended = await ask(alice, { taskId: id("alice-ended"), secret: "alice's result" });
      expect(text(await ended.outcome())).toContain("alice's result");
      const b = await ask(bob, {
        taskId: id("bob"),
        question: "a question about alice's task",
        related: id("alice-ended"),
        secret: "bob's result",
      });
      const result = text(await b.outcome());
      expect(result).toContain("bob's result | refused:");
      expect(result).toContain(`the gateway follows no upstream task ${id("alice-ended")} now`);
      expect(bob.asked).toEqual([]);
      expect(alice.asked).toEqual([]);
    },
  },
  {
    name: "refuses the upstream a question naming no task while calls of two principals are in flight",
    async run(protocol, id) {
      const alice = await caller(protocol, ALICE, "Alice", { hold: true });
      const bob = await caller(protocol, BOB, "Bob");
      const a = await ask(alice, { taskId: id("alice"), question: "alice's question", secret: "alice's result" });
      const aliceDone = a.outcome();
      await eventually("alice to be asked", async () => (alice.asked.length > 0 ? true : undefined));
      const b = await ask(bob, { taskId: id("bob"), question: "whose question?", related: "none", secret: "bob's result" });
      const result = text(await b.outcome());
      expect(result).toContain("bob's result | refused:");
      expect(result).toMatch(/elicitation\/create: the gateway has 2 calls in flight and cannot tell which one asks/);
      alice.release();
      expect(text(await aliceDone)).toContain("alice's result | answer:");
      expect(alice.asked).toEqual(["alice's question"]);
      expect(bob.asked).toEqual([]);
    },
  },
  {
    name: "puts a question naming a task to that task's owner only, and status about one principal's task never shows on the other's",
    async run(protocol, id) {
      const alice = await caller(protocol, ALICE, "Alice", { hold: true });
      const bob = await caller(protocol, BOB, "Bob", { hold: true });
      const a = await ask(alice, { taskId: id("alice"), question: "alice's question", secret: "alice's result" });
      const aliceDone = a.outcome();
      await eventually("alice to be asked", async () => (alice.asked.length > 0 ? true : undefined));
      // Bob's upstream task asks bob, and reports status about alice's task on each of its polls.
      const b = await ask(bob, { taskId: id("bob"), question: "bob's question", statusFor: id("alice"), secret: "bob's result" });
      const bobDone = b.outcome();
      await eventually("bob to be asked", async () => (bob.asked.length > 0 ? true : undefined));
      const aliceStatus = await eventually("alice's task to show the status about it", async () => {
        const message = (await a.status()).statusMessage;
        return message?.includes("status meant for") ? message : undefined;
      });
      expect(aliceStatus).toBe(`Upstream: status meant for ${id("alice")}`);
      expect((await b.status()).statusMessage ?? "").not.toContain("status meant for");
      alice.release();
      bob.release();
      expect(text(await aliceDone)).toContain('alice\'s result | answer: {\\"name\\":\\"Alice\\"}');
      expect(text(await bobDone)).toContain('bob\'s result | answer: {\\"name\\":\\"Bob\\"}');
      expect(alice.asked).toEqual(["alice's question"]);
      expect(bob.asked).toEqual(["bob's question"]);
    },
  },
];

describe.each(FRONT_ERAS)("gateway shared by two principals in front of a hostile task server, front $name", { timeout: 60_000 }, (era) => {
  for (const [index, testCase] of CASES.entries()) {
    it(testCase.name, () => testCase.run(era.name, (name) => `${era.name}-${index}-${name}`));
  }
});
