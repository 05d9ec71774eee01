/**
 * compose.yaml's services started one by one with podman from the file's own definitions —
 * image or build, command, environment, volumes, health check, `depends_on` with its condition —
 * in dependency order, each `service_healthy` dependency waited for by running its health check
 * (no systemd timer runs them here). Debian's podman-compose (1.0.3) does not handle the file: it
 * starts every service at once without waiting for `condition: service_healthy`, builds in the OCI
 * format, which drops the image's HEALTHCHECK, and ignores the top-level `name`.
 * Variables are substituted as compose does (`${NAME}`, `${NAME:-default}`, `${NAME:?message}`).
 * What the caller adapts for the host's network is passed in explicitly ({@link HostNetwork}).
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { Podman, RunOptions } from "../support/podman.js";

interface HealthCheck {
  test?: string[];
  interval?: string;
  retries?: number;
  disable?: boolean;
}

export interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: HealthCheck;
}

export interface ComposeFile {
  name: string;
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** compose's variable substitution over every string of the file. */
function interpolate<T>(value: T, env: Record<string, string | undefined>): T {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Z0-9_]+)(?:(:-|:\?)([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
      const set = env[name];
      if (op === ":-") return set === undefined || set === "" ? (arg ?? "") : set;
      if (op === ":?" && (set === undefined || set === "")) throw new Error(`compose: ${name}: ${arg}`);
      return set ?? "";
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => interpolate(v, env)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  }
  return value;
}

/** The file parsed (YAML merge keys resolved) with `env`'s values substituted. */
export function loadCompose(path: string, env: Record<string, string | undefined>): ComposeFile {
  return interpolate(parse(readFileSync(path, "utf8"), { merge: true }) as ComposeFile, env);
}

function dependencies(service: Service): [string, string][] {
  const deps = service.depends_on ?? [];
  return Array.isArray(deps)
    ? deps.map((d) => [d, "service_started"])
    : Object.entries(deps).map(([d, spec]) => [d, spec.condition ?? "service_started"]);
}

/** Service names, each after the ones it depends on. */
export function startOrder(file: ComposeFile): string[] {
  const order: string[] = [];
  const visit = (name: string, path: string[]): void => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`compose: a dependency cycle through ${name}`);
    const service = file.services[name];
    if (!service) throw new Error(`compose: no service ${name}`);
    for (const [dep] of dependencies(service)) visit(dep, [...path, name]);
    order.push(name);
  };
  for (const name of Object.keys(file.services)) visit(name, []);
  return order;
}

/** How the caller runs each service on the host's network: the image for each, and per-service changes. */
export interface HostNetwork {
  /** The image to run for a service (its `image`, or what its `build` built). */
  image(name: string, service: Service): string;
  /** Changes to one service's run (an entrypoint, a port in its environment, a mounted file). */
  adapt?(name: string, run: RunOptions): RunOptions;
}

/** A duration of compose (`5s`, `1m`) in whole seconds. */
function seconds(value: string | undefined, fallback: number): number {
  const match = /^(\d+)(s|m)?$/.exec(value ?? "");
  return match ? Number(match[1]) * (match[2] === "m" ? 60 : 1) : fallback;
}

/** Starts every service; resolves with the container name of each. */
export async function startServices(
  podman: Podman,
  file: ComposeFile,
  prefix: string,
  network: HostNetwork,
  started: string[],
): Promise<Record<string, string>> {
  const names: Record<string, string> = {};
  const volumeNames = new Set(Object.keys(file.volumes ?? {}));
  for (const name of startOrder(file)) {
    const service = file.services[name] as Service;
    for (const [dep, condition] of dependencies(service)) {
      if (condition === "service_healthy") await podman.waitHealthy(names[dep] as string, 120_000);
    }
    const container = `${prefix}-${name}`;
    let run: RunOptions = {
      name: container,
      image: network.image(name, service),
      args: service.command ?? [],
      env: service.environment ?? {},
      // A named volume of the file is this project's: prefixed, as compose does.
      volumes: (service.volumes ?? []).map((v) => {
        const [source, ...rest] = v.split(":");
        return volumeNames.has(source as string) ? [`${prefix}-${source}`, ...rest].join(":") : v;
      }),
    };
    const health = service.healthcheck;
    if (health?.disable) run.noHealthcheck = true;
    else if (health?.test) {
      const [kind, ...cmd] = health.test;
      if (kind !== "CMD") throw new Error(`compose: ${name}: only ["CMD", …] health checks are run here`);
      run.health = { cmd, intervalS: seconds(health.interval, 30), retries: health.retries ?? 3 };
    }
    if (network.adapt) run = network.adapt(name, run);
    started.push(container);
    await podman.start(run);
    names[name] = container;
  }
  return names;
}
