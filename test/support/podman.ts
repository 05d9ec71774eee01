/**
 * Debian's podman, set up the way these machines run containers: runc as the runtime, cgroupfs as
 * the cgroup manager (no systemd), no default ulimits, in a CONTAINERS_CONF file written here, and
 * every container on the host's network (`--network host`), so a container's port is a port of
 * 127.0.0.1 and nothing depends on a bridge. Without systemd no timer runs an image's health check:
 * {@link Podman.healthcheck} runs it as the timer would.
 */
import { execFile, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CONTAINERS_CONF = `[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
`;

export interface RunOptions {
  name: string;
  image: string;
  /** Arguments after the image: the command, or the entrypoint's arguments. */
  args?: string[];
  env?: Record<string, string>;
  /** `volume-or-path:/in/container[:ro]` */
  volumes?: string[];
  user?: string;
  entrypoint?: string;
  /** podman's own health-check flags, e.g. a compose service's `healthcheck`. */
  health?: { cmd: string[]; intervalS?: number; retries?: number };
  /** No health check at all, not even the image's. */
  noHealthcheck?: boolean;
}

export class Podman {
  private readonly env: NodeJS.ProcessEnv;

  /** `dir`: where the CONTAINERS_CONF file is written (a temporary directory of the test's). */
  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    const conf = join(dir, "containers.conf");
    writeFileSync(conf, CONTAINERS_CONF);
    this.env = { ...process.env, CONTAINERS_CONF: conf };
  }

  /** Runs `podman …args` and resolves with its stdout; rejects with its stderr on failure. */
  run(args: string[], options: { timeoutMs?: number; input?: NodeJS.ReadableStream } = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn("podman", args, { env: this.env, stdio: [options.input ? "pipe" : "ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      if (options.input && child.stdin) options.input.pipe(child.stdin);
      const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else reject(new Error(`podman ${args.join(" ")} exited ${code}:\n${stderr.slice(-4000)}`));
      });
    });
  }

  async imageExists(tag: string): Promise<boolean> {
    return this.run(["image", "exists", tag]).then(
      () => true,
      () => false,
    );
  }

  /**
   * `podman build` in the Docker format (the OCI format has no HEALTHCHECK), on the host's
   * network (the build stage reaches the package registries like the host does).
   */
  async build(context: string, tag: string, options: { file?: string; buildArgs?: Record<string, string>; timeoutMs?: number } = {}) {
    const args = ["build", "--format", "docker", "--network", "host", "-t", tag];
    if (options.file) args.push("-f", options.file);
    for (const [name, value] of Object.entries(options.buildArgs ?? {})) args.push("--build-arg", `${name}=${value}`);
    await this.run([...args, context], { timeoutMs: options.timeoutMs ?? 30 * 60_000 });
  }

  /** Starts a detached container on the host's network; resolves with its id. */
  async start(options: RunOptions): Promise<string> {
    const args = ["run", "-d", "--network", "host", "--name", options.name];
    for (const [name, value] of Object.entries(options.env ?? {})) args.push("-e", `${name}=${value}`);
    for (const volume of options.volumes ?? []) args.push("-v", volume);
    if (options.user) args.push("--user", options.user);
    if (options.entrypoint !== undefined) args.push("--entrypoint", options.entrypoint);
    if (options.health) {
      args.push("--health-cmd", JSON.stringify(options.health.cmd));
      args.push("--health-interval", `${options.health.intervalS ?? 30}s`, "--health-retries", String(options.health.retries ?? 3));
    }
    if (options.noHealthcheck) args.push("--no-healthcheck");
    const out = await this.run([...args, options.image, ...(options.args ?? [])]);
    return out.trim();
  }

  /** A value of `podman inspect` (a Go template such as `{{.State.Health.Status}}`). */
  async inspect(container: string, format: string): Promise<string> {
    return (await this.run(["inspect", "--format", format, container])).trim();
  }

  /** Runs the container's health check once, as podman's systemd timer would; resolves with the new status. */
  async healthcheck(container: string): Promise<string> {
    await this.run(["healthcheck", "run", container]).catch(() => undefined);
    return this.inspect(container, "{{.State.Health.Status}}");
  }

  /** Runs the health check every `everyMs` until it reports healthy; rejects (with the logs) after `timeoutMs`. */
  async waitHealthy(container: string, timeoutMs = 60_000, everyMs = 500): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let status = "";
    while (Date.now() < deadline) {
      status = await this.healthcheck(container);
      if (status === "healthy") return;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    throw new Error(`${container} is not healthy after ${timeoutMs} ms (${status}); its output:\n${await this.logs(container)}`);
  }

  async logs(container: string): Promise<string> {
    return this.run(["logs", container]).catch((error: Error) => error.message);
  }

  /** Removes containers (killing them) with their anonymous volumes (the image's /data), ignoring ones already gone. */
  async remove(...containers: string[]): Promise<void> {
    if (containers.length > 0) await this.run(["rm", "-f", "-v", "-t", "0", "--ignore", ...containers]).catch(() => undefined);
  }

  async removeVolumes(...volumes: string[]): Promise<void> {
    for (const volume of volumes) await this.run(["volume", "rm", "-f", volume]).catch(() => undefined);
  }
}

/** Whether podman can be run at all (the test then says what to install rather than failing obscurely). */
export function podmanVersion(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile("podman", ["--version"], (error, stdout) => resolve(error ? undefined : stdout.trim()));
  });
}
