/**
 * One loop follows a task on the other side: the requestor's handle (RemoteTask under
 * 2025-11-25). TaskClient follows its tasks with it, and so does the gateway its upstream's: the
 * requestor (src/mcp/requestor/, reached by the gateway directly, not through the server's era)
 * hands the gateway that handle and no request of its own to look at a task or fetch its
 * result, and src/gateway sends none itself — no `request(…)`, none of the SDK's task helpers.
 * The source check runs on the real tree and on a planted file (parsed from memory).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { SESSION_REQUESTOR } from "../../src/mcp/requestor/requestor-eras.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const GATEWAY = join(ROOT, "src/gateway");

/**
 * Calls that put a request on the wire outside the SDK's typed MCP methods (callTool, readResource,
 * …): the generic `request`, and the SDK's own task helpers, each a way to poll a task.
 */
const OWN_REQUESTS = new Set(["request", "requestStream", "getTask", "getTaskResult", "listTasks", "cancelTask", "callToolStream"]);

/** `line: callee` of each such call in a source text. */
function ownRequests(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && OWN_REQUESTS.has(node.expression.name.text)) {
      found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.expression.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the gateway follows upstream tasks with the requestor's loop", () => {
  it("src/gateway sends no request of its own: no request(…), none of the SDK's task helpers", () => {
    const files = sourceFiles(GATEWAY);
    expect(files.length).toBeGreaterThan(5);
    expect(
      files.flatMap((path) => ownRequests(path, readFileSync(path, "utf8")).map((call) => `${path.slice(ROOT.length + 1)}:${call}`)),
    ).toEqual([]);
  });

  it("a poll written into the gateway is caught", () => {
    const planted = [
      "export async function poll(client, taskId) {",
      "  const task = await client.request({ method: METHOD, params: { taskId } }, Schema, {});",
      "  const again = await client.experimental.tasks.getTask(taskId);",
      "  return [task, again];",
      "}",
    ].join("\n");
    expect(ownRequests("src/gateway/planted.ts", planted)).toEqual(["2: client.request", "3: client.experimental.tasks.getTask"]);
  });

  it("the session requestor offers the gateway the handle, and no request to look at a task or fetch its result", () => {
    expect(Object.keys(SESSION_REQUESTOR.upstream).sort()).toEqual(["clientCapabilities", "create", "relatedTaskOf", "runsAsTask", "task"]);
  });

  it("the handle the gateway gets is the one TaskClient follows its tasks with", () => {
    const client = new Client({ name: "architecture", version: "1.0.0" });
    const upstream = SESSION_REQUESTOR.upstream.task(client, "t-1", {
      requestTimeoutMs: 1000,
      pollIntervalBoundsMs: { min: 100, max: 5000 },
    });
    const requestor = SESSION_REQUESTOR.requestor(client, undefined).task("t-1", { answerInput: true, onLifecycle: () => {} });
    try {
      expect(Object.getPrototypeOf(upstream)).toBe(Object.getPrototypeOf(requestor));
    } finally {
      upstream.dispose();
      requestor.dispose();
    }
  });
});
