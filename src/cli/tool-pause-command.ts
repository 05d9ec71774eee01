/**
 * `mcp-tasks tools pause | resume <url> <tool>` (docs/cli.md): pauses or resumes a tool across a
 * server's cluster through its admin HTTP route (`POST /tasks/api/queues/<tool>/pause | resume`),
 * with the admin token, for scripts. A paused tool's new tasks are accepted and queued; none of
 * its tasks starts until it is resumed; running ones go on.
 */
import { Command, Option } from "commander";
import { ExitCode } from "./exit-codes.js";

function adminTokenOption(): Option {
  return new Option("--admin-token <token>", "the server's admin token (or a bearer token with the mcp-tasks:admin scope)")
    .env("MCP_TASKS_ADMIN_TOKEN")
    .makeOptionMandatory();
}

/** The command's outcome, as the exit code says it: 0 done, 6 refused credentials, 2 an unknown tool or bad URL, 4 unreachable, 1 otherwise. */
export async function changeToolPause(
  action: "pause" | "resume",
  target: string,
  tool: string,
  token: string,
  out: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<number> {
  let url: URL;
  try {
    url = new URL(`/tasks/api/queues/${encodeURIComponent(tool)}/${action}`, target);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("not http(s)");
  } catch {
    out.stderr.write(`mcp-tasks tools ${action}: ${target} is not an http(s) URL of a server\n`);
    return ExitCode.Usage;
  }
  let response: Response;
  try {
    response = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    out.stderr.write(`mcp-tasks tools ${action}: cannot reach ${url.origin}: ${cause}\n`);
    return ExitCode.Connection;
  }
  const body = (await response.json().catch(() => ({}))) as { error?: { message?: string }; changed?: boolean };
  if (!response.ok) {
    const message = body.error?.message ?? `HTTP ${response.status}`;
    out.stderr.write(`mcp-tasks tools ${action}: ${message}\n`);
    if (response.status === 401 || response.status === 403) return ExitCode.Authentication;
    if (response.status === 404) return ExitCode.Usage;
    return ExitCode.Failed;
  }
  const done = action === "pause" ? "paused" : "resumed";
  const already = action === "pause" ? "was paused already" : "was not paused";
  out.stdout.write(`${tool} ${body.changed === false ? already : done}\n`);
  return ExitCode.Ok;
}

/** `tools pause` or `tools resume`. */
export function toolPauseCommand(action: "pause" | "resume"): Command {
  const what =
    action === "pause"
      ? "pause a tool on every node: its new tasks are queued and none starts; running ones go on"
      : "resume a paused tool: its queued tasks start as slots allow";
  return new Command(action)
    .description(what)
    .argument("<url>", "the server's URL (its MCP endpoint or its root)")
    .argument("<tool>", "the tool's name")
    .addOption(adminTokenOption())
    .action(async (target: string, tool: string, opts: { adminToken: string }) => {
      process.exitCode = await changeToolPause(action, target, tool, opts.adminToken, { stdout: process.stdout, stderr: process.stderr });
    });
}
