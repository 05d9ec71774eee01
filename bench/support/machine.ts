import { arch, cpus, loadavg, platform, release, totalmem } from "node:os";

/** The facts about this machine a bench's figures are read against. */
export interface Machine {
  cores: number;
  /** The first CPU's model name. */
  model: string;
  ramGiB: number;
  /** e.g. "linux 6.8.0 x64". */
  os: string;
  node: string;
  /** The 1, 5 and 15 minute load averages, two decimals each. */
  load: string;
}

export function machine(): Machine {
  const list = cpus();
  return {
    cores: list.length,
    model: list[0]?.model.trim() ?? "unknown",
    ramGiB: totalmem() / 2 ** 30,
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    load: loadavg()
      .map((n) => n.toFixed(2))
      .join(" "),
  };
}
