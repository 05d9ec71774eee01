#!/usr/bin/env node
/**
 * A stdio MCP server as it is, with what it receives written down: `node stdio-tap.mjs <log file>
 * <command> [args…]` starts the command, passes stdin to it and its stdout and stderr back, and
 * appends every chunk it passes to the command's stdin to the log file. A gateway run with this
 * as its upstream command talks to the real server, and the test reads the exact JSON-RPC lines
 * that server was sent (a server that exports no spans of its own shows nothing else).
 */
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [log, command, ...args] = process.argv.slice(2);
if (!log || !command) {
  process.stderr.write("usage: stdio-tap.mjs <log file> <command> [args…]\n");
  process.exit(2);
}
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
process.stdin.on("data", (chunk) => {
  appendFileSync(log, chunk);
  child.stdin.write(chunk);
});
// The gateway closing our stdin ends the server as it would have without the tap.
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal));
