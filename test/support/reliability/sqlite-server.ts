/**
 * `mcp-tasks serve --demo` on one SQLite file, for the reliability suite: quotas and the rate
 * limit out of the way (the load is one requestor, and the scenarios are about crashes, not limits), no web
 * view, a free port.
 */
import { CliProcess } from "../cli-process.js";

export const LOAD_LIMITS = ["--max-active-tasks", "100000", "--max-stored-tasks", "10000000", "--rate-limit", "off"];

export async function startSqliteServer(file: string, extra: string[] = []): Promise<{ server: CliProcess; url: string }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--no-web", ...LOAD_LIMITS, ...extra]);
  return { server, url: await server.url() };
}
