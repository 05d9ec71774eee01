/**
 * A gateway in front of an upstream over Streamable HTTP (the real server-everything) outlives
 * that upstream's restart, in both eras: while the upstream is down a call fails saying it cannot
 * be reached and why; once it is back on the same address, the gateway notices that its session
 * is gone (HTTP 404, or server-everything's 400), initializes a new one, and serves the next call,
 * with no restart of its own. The same for an upstream with tasks of its own (`mcp-tasks serve`),
 * whose task the gateway follows: the first creation after the restart goes to the new session.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { CliProcess, cliEnv, killAll } from "../support/cli-process.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { freePort } from "../support/free-port.js";
import { isTerminal, pollTask, statelessResult, statelessRpc } from "../support/stateless-client.js";
import { closeClients, EVERYTHING, eventually, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const children: ChildProcess[] = [];
afterEach(async () => {
  await closeClients();
  await killAll();
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

function upstreamOn(port: number): ChildProcess {
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: cliEnv({ PORT: String(port) }), stdio: "ignore" });
  children.push(child);
  return child;
}

const sessions = new WeakMap<GatewayProcess, ReturnType<GatewayProcess["connect"]>>();
/** One requestor session per gateway, as a host keeps it. */
function sessionOf(gateway: GatewayProcess): ReturnType<GatewayProcess["connect"]> {
  let session = sessions.get(gateway);
  if (!session) sessions.set(gateway, (session = gateway.connect()));
  return session;
}

interface Era {
  name: string;
  /** A `sleep` task through the gateway, followed to its end: its text. */
  sleep(gateway: GatewayProcess): Promise<string | undefined>;
  /** A plain `echo` call through the gateway: its text, or what it failed with. */
  echo(gateway: GatewayProcess, message: string): Promise<{ text?: string; failure?: string }>;
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    async sleep(gateway) {
      const { client } = await sessionOf(gateway);
      const created = await callToolAsTask(client, "sleep", { ms: 50 });
      return ((await taskResult(client, created.task.taskId)).content[0] as { text?: string }).text;
    },
    async echo(gateway, message) {
      const { client } = await sessionOf(gateway);
      try {
        const result = await client.request(
          { method: "tools/call", params: { name: "echo", arguments: { message } } },
          CallToolResultSchema,
        );
        return { text: (result.content[0] as { text?: string }).text };
      } catch (error) {
        if (error instanceof McpError && error.code === -32603) return { failure: error.message };
        throw error;
      }
    },
  },
  {
    name: "2026-07-28",
    async sleep(gateway) {
      const created = await statelessResult(gateway.url, "tools/call", { name: "sleep", arguments: { ms: 50 } });
      const done = created["resultType"] === "task" ? await pollTask(gateway.url, String(created["taskId"]), isTerminal) : created;
      return ((done["result"] as { content?: Array<{ text?: string }> } | undefined)?.content ??
        (done["content"] as Array<{ text?: string }> | undefined))?.[0]?.text;
    },
    async echo(gateway, message) {
      const { body } = await statelessRpc(gateway.url, "tools/call", { name: "echo", arguments: { message } });
      const result = body.result ?? {};
      // A call that failed at once comes back as its task, already failed.
      if (result["resultType"] === "task" && result["status"] === "failed") return { failure: String(result["statusMessage"]) };
      return { text: ((result["content"] as Array<{ text?: string }> | undefined) ?? [])[0]?.text };
    },
  },
];

describe.each(ERAS)("gateway: an HTTP upstream restarted under it ($name)", { timeout: 90_000 }, (era) => {
  it("says the upstream cannot be reached while it is down, and serves again on a new session once it is back", async () => {
    const port = await freePort();
    const first = upstreamOn(port);
    const url = `http://127.0.0.1:${port}/mcp`;
    const gateway = await eventually("the gateway to reach the upstream", () => startGateway(["--store", "memory", "--upstream-url", url]));
    expect(await era.echo(gateway, "before")).toEqual({ text: "Echo: before" });

    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    const down = await era.echo(gateway, "down");
    expect(down.failure).toMatch(/could not be reached for tools\/call echo: connection refused .*\[ECONNREFUSED\]/);

    upstreamOn(port);
    const back = await eventually("a call after the upstream's restart", async () => {
      const answer = await era.echo(gateway, "after");
      return answer.text === undefined ? undefined : answer;
    });
    expect(back).toEqual({ text: "Echo: after" });
    expect(
      gateway.cli.stderr.filter(
        (l) => l["msg"] === "the upstream server no longer knows the gateway's session (it restarted); connecting again",
      ).length,
    ).toBeGreaterThanOrEqual(1);
  });

  it("follows an upstream with tasks of its own across its restart: the first task after it runs on a new session", async () => {
    const port = await freePort();
    const serve = ["serve", "--demo", "--port", String(port), "--store", "memory"];
    const first = CliProcess.spawn(serve);
    await first.url();
    const gateway = await startGateway(["--store", "memory", "--upstream-url", `http://127.0.0.1:${port}/mcp`]);
    expect(await era.sleep(gateway)).toBe("slept 50 ms");
    await first.kill("SIGKILL");
    await CliProcess.spawn(serve).url();
    expect(await era.sleep(gateway)).toBe("slept 50 ms");
    expect(
      gateway.cli.stderr.filter(
        (l) => l["msg"] === "the upstream server no longer knows the gateway's session (it restarted); connecting again",
      ),
    ).toHaveLength(1);
  });
});
