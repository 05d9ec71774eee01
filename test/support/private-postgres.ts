/**
 * A PostgreSQL server of a test's own, on a free port and a temporary data directory, for tests
 * that restart the server: the shared one on 5432 serves every other test file at the same time.
 * Built from the PostgreSQL binaries the machine has (Debian: /usr/lib/postgresql/<v>/bin); run
 * as the `postgres` user when the tests run as root, since PostgreSQL refuses to run as root.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth) */
  url: string;
  /** Stops the server (fast shutdown: connections are cut) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, "bin")).find((dir) => existsSync(join(dir, "pg_ctl")));
  if (!found) throw new Error(`no PostgreSQL binaries under ${root}: install postgresql`);
  return found;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const run = (command: string, args: string[]): void => {
    const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, command), ...args]] : [join(bin, command), args];
    execFileSync(file as string, argv as string[], { stdio: "pipe", timeout: 60_000 });
  };
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  // Sockets in the test's own directory; no fsync: nothing here needs to survive a crash.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgCtl = (...args: string[]): void => run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", ...args]);
  pgCtl("-o", options, "start");
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart() {
      pgCtl("-m", "fast", "stop");
      pgCtl("-o", options, "start");
    },
    async stop() {
      try {
        pgCtl("-m", "immediate", "stop");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
