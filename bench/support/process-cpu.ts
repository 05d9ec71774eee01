import { readFileSync } from "node:fs";

/** The ticks of /proc/<pid>/stat's utime and stime (USER_HZ is 100 on Linux). */
const TICK_MS = 10;

/** user + system CPU (ms) of `pid` so far, all its threads, from /proc (Linux); null elsewhere or once it is gone. */
export function cpuOf(pid: number | undefined): number | null {
  return pid === undefined ? null : statCpu(`/proc/${pid}/stat`);
}

/**
 * user + system CPU (ms) of `pid`'s main thread alone: the thread that runs its JavaScript, whose
 * time per request bounds the rate a Node server can reach. V8's helper threads (garbage
 * collection, compilation) are left out.
 */
export function mainThreadCpuOf(pid: number | undefined): number | null {
  return pid === undefined ? null : statCpu(`/proc/${pid}/task/${pid}/stat`);
}

function statCpu(path: string): number | null {
  try {
    // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th.
    const fields = readFileSync(path, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Sum of the CPU of `pid` and its descendants (npm → sh → node, tsx → node). */
export function treeCpuOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  let total = cpuOf(pid);
  if (total === null) return null;
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  } catch {
    // no children file: count the process alone
  }
  for (const child of children) total += treeCpuOf(Number(child)) ?? 0;
  return total;
}
