/**
 * What both container tests start from: podman set up for these machines (test/support/podman.ts),
 * the stand-in base images (made once per machine), and the repository's Dockerfile built on the
 * Node stand-in — podman's layer cache makes a rebuild cost only the layers whose inputs changed.
 * Each step's wall time is printed, so a run shows what the lane costs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Podman, podmanVersion } from "../support/podman.js";
import { nodeBase, servicesImage } from "../support/stand-in-images.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The tag the tests build the repository's Dockerfile as. */
export const APP_IMAGE = "localhost/mcp-tasks:test";

export interface Lab {
  podman: Podman;
  /** A temporary directory of the test's own. */
  dir: string;
  /** The Node stand-in the image is built on (the Dockerfile's NODE_IMAGE). */
  base: string;
  /** A unique prefix for this run's container and volume names. */
  prefix: string;
  cleanup(): void;
}

async function timed<T>(what: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const value = await step();
  console.log(`[containers] ${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return value;
}

/** Podman, the Node stand-in and the application image; `services` also makes the services stand-in. */
export async function openLab(name: string): Promise<Lab> {
  const version = await podmanVersion();
  if (!version)
    throw new Error("podman is not installed: the container tests need Debian's podman, runc and debootstrap (.ci/run installs them)");
  const dir = mkdtempSync(join(tmpdir(), `mcp-tasks-${name}-`));
  const podman = new Podman(join(dir, "podman"));
  const base = await timed("Node stand-in base image (made once per machine)", () => nodeBase(podman));
  await timed(`podman build of the Dockerfile (${version})`, () => podman.build(REPO_ROOT, APP_IMAGE, { buildArgs: { NODE_IMAGE: base } }));
  const prefix = `mcp-tasks-${name}-${process.pid}-${Date.now().toString(36)}`;
  return { podman, dir, base, prefix, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function openServices(lab: Lab): Promise<string> {
  return timed("services stand-in image (made once per machine)", () => servicesImage(lab.podman, lab.base));
}
