/**
 * A PostgreSQL server of a test's own, on a free port and a temporary data directory, for tests
 * that restart the server: the shared one on 5432 serves every other test file at the same time.
 * Built from the PostgreSQL binaries the machine has (Debian: /usr/lib/postgresql/<v>/bin); run
 * as the `postgres` user when the tests run as root, since PostgreSQL refuses to run as root.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth) */
  url: string;
  /**
   * Stops the server and starts it again on the same port: `fast` (the default) ends every
   * session with 57P01, `immediate` kills the server as a crash would (crash recovery on start).
   * `downMs`: how long it stays down in between. Run without blocking the test's event loop, so
   * requestors in the test go on sending meanwhile.
   */
  restart(mode?: "fast" | "immediate", downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, "bin")).find((dir) => existsSync(join(dir, "pg_ctl")));
  if (!found) throw new Error(`no PostgreSQL binaries under ${root}: install postgresql`);
  return found;
}

/**
 * `settings`: more server settings (`-c name=value`), e.g. `{ max_connections: "12" }` for a
 * server that runs out of connections.
 */
export async function startPrivatePostgres(settings: Record<string, string> = {}): Promise<PrivatePostgres> {
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
  const extra = Object.entries(settings)
    .map(([name, value]) => ` -c ${name}=${value}`)
    .join("");
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${extra}`;
  const pgCtl = (...args: string[]): void => run("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", ...args]);
  const pgCtlAsync = async (...args: string[]): Promise<void> => {
    const argv = [join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "log"), "-w", ...args];
    const [file, rest] = asRoot ? ["runuser", ["-u", "postgres", "--", ...argv]] : [argv[0]!, argv.slice(1)];
    await promisify(execFile)(file, rest, { timeout: 60_000 });
  };
  pgCtl("-o", options, "start");
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode = "fast", downMs = 0) {
      await pgCtlAsync("-m", mode, "stop");
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await pgCtlAsync("-o", options, "start");
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
