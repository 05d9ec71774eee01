import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** A command line to spawn: the program and its arguments. */
export interface SpawnCommand {
  command: string;
  args: string[];
}

/**
 * Why a stdio upstream needs this: when the gateway is killed with -9 it cannot end its upstream,
 * and closing the upstream's stdin is only a request — `@modelcontextprotocol/server-everything`,
 * for one, keeps running after its stdin closes (minutes, holding the dead gateway's stderr open).
 *
 * How: on Linux the upstream is started under `setpriv --pdeathsig SIGTERM` (util-linux, an
 * Essential package in Debian, present on most distributions): the kernel sends the upstream
 * SIGTERM the moment its parent dies, however it died. Chosen over a watchdog process that polls
 * the parent pid because it costs no process, no polling delay and no code of ours that could
 * itself be killed; SIGTERM rather than SIGKILL so an upstream may still clean up. setpriv execs
 * the upstream, so its pid is the one the SDK's transport spawned (and signals on close).
 *
 * Two gaps are closed here: the death signal is armed only once setpriv has run, so a gateway
 * killed in that instant would still leave an orphan — a `sh` between setpriv and the upstream
 * checks that its parent is still the gateway and exits if not (and then execs, keeping the pid);
 * and a program that cannot be found is left to the plain spawn, so it fails with ENOENT as before
 * rather than as setpriv's exit status.
 *
 * Elsewhere (macOS, Windows, a Linux without setpriv) the command runs as it is, and an upstream
 * that ignores the end of its stdin outlives a killed gateway (docs/gateway.md).
 * The signal follows the thread that spawned the upstream: the gateway spawns from its main
 * thread, so that is the process's life. Grandchildren the upstream starts are its own affair.
 */
export function tiedToGateway(upstream: SpawnCommand, env: NodeJS.ProcessEnv = process.env): SpawnCommand {
  const plain = { command: upstream.command, args: upstream.args };
  if (process.platform !== "linux") return plain;
  const setpriv = onPath("setpriv", env);
  const sh = onPath("sh", env);
  if (!setpriv || !sh || !onPath(upstream.command, env)) return plain;
  const parentCheck =
    '[ "$PPID" = "$1" ] || { echo "mcp-tasks gateway: the gateway exited before its upstream started" >&2; exit 1; }; shift; exec "$@"';
  return {
    command: setpriv,
    args: [
      "--pdeathsig",
      "SIGTERM",
      "--",
      sh,
      "-c",
      parentCheck,
      "mcp-tasks-upstream",
      String(process.pid),
      upstream.command,
      ...upstream.args,
    ],
  };
}

/** Where `program` would be run from (as execvp finds it), or undefined when it is not an executable file. */
function onPath(program: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = program.includes("/")
    ? [program]
    : (env["PATH"] ?? "")
        .split(delimiter)
        .filter((dir) => isAbsolute(dir))
        .map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
