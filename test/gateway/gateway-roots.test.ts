/**
 * Roots through the gateway: an upstream's `roots/list` during a task-run call becomes
 * the task's question to the requestor (T-INPUT; both eras allow it, X-UPD-1 names roots/list), and
 * is otherwise answered from the gateway's own `--root` flags / config `roots` — which is what
 * server-filesystem, asking at initialization, sees as its allowed directories.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { killAll, REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { closeClients, eventually, FILESYSTEM, nodeCommand, startGateway } from "./gateway-fixture.js";

const ROOTS_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/roots-upstream.mjs");
const dirs: string[] = [];
afterEach(async () => {
  await closeClients();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "mcp-tasks-gw-roots-")));
  dirs.push(dir);
  return dir;
}

const text = (result: { content: unknown }) => (result.content as Array<{ text?: string }>)[0]?.text ?? "";

describe("gateway: roots", { timeout: 120_000 }, () => {
  it("server-filesystem started without directories sees the gateway's --root flags and config roots as its allowed directories", async () => {
    const [one, two] = [tempDir(), tempDir()];
    writeFileSync(join(two, "inside.txt"), "from a configured root");
    const config = join(one, "gateway.json");
    writeFileSync(config, JSON.stringify({ roots: [{ uri: pathToFileURL(two).href, name: "second" }] }));
    const gateway = await startGateway([
      "--store",
      "memory",
      "--config",
      config,
      "--root",
      one,
      "--upstream-stdio",
      nodeCommand(FILESYSTEM),
    ]);
    const { client } = await gateway.connect();
    // server-filesystem asks for roots right after initializing, in the background.
    const allowed = await eventually("the upstream to take the roots", async () => {
      const listed = text(await callToolAsTask(client, "list_allowed_directories", {}).then((c) => taskResult(client, c.task.taskId)));
      return listed.includes(one) && listed.includes(two) ? listed : undefined;
    });
    expect(allowed).toContain(one);
    const read = await callToolAsTask(client, "read_text_file", { path: join(two, "inside.txt") });
    expect(text(await taskResult(client, read.task.taskId))).toBe("from a configured root");
  });

  it("puts an upstream's roots/list during a task to the requestor (input_required) when it declared roots", async () => {
    const fallback = tempDir();
    const gateway = await startGateway(["--store", "memory", "--root", fallback, "--upstream-stdio", nodeCommand(ROOTS_UPSTREAM)]);
    const http = await gateway.connect({ capabilities: { roots: {}, elicitation: { form: {} } } });
    let asked = 0;
    http.client.setRequestHandler(ListRootsRequestSchema, async () => {
      asked++;
      return { roots: [{ uri: "file:///home/requestor/project", name: "project" }] };
    });
    const created = await callToolAsTask(http.client, "which-roots", {});
    const result = await taskResult(http.client, created.task.taskId);
    expect(JSON.parse(text(result))).toEqual([{ uri: "file:///home/requestor/project", name: "project" }]);
    expect(asked).toBe(1);
    // The question went to the requestor as the task's, with the related-task metadata (T-INPUT-2).
    const question = http.received.filter((r) => r.message.method === "roots/list");
    expect(question).toHaveLength(1);
    expect(question[0]?.message.params?._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId: created.task.taskId });
    expect((await getTask(http.client, created.task.taskId)).status).toBe("completed");
  });

  it("answers from the gateway's configured roots when the requestor declared no roots", async () => {
    const fallback = tempDir();
    const gateway = await startGateway(["--store", "memory", "--root", fallback, "--upstream-stdio", nodeCommand(ROOTS_UPSTREAM)]);
    const http = await gateway.connect();
    const created = await callToolAsTask(http.client, "which-roots", {});
    const result = await taskResult(http.client, created.task.taskId);
    expect(JSON.parse(text(result))).toEqual([{ uri: pathToFileURL(fallback).href, name: fallback.split("/").pop() }]);
    expect(http.received.filter((r) => r.message.method === "roots/list")).toHaveLength(0);
  });
});
