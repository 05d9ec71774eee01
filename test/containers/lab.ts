/**
 * What the container tests start from: podman set up for these machines (test/support/podman.ts),
 * the stand-in base images (made once per machine) and the repository's Dockerfile built on the
 * Node stand-in. {@link buildImages} runs once per test run (vitest.containers.config.ts's global
 * setup), printing each step's wall time so a run shows what the lane costs; podman's layer cache
 * makes a rebuild cost only the layers whose inputs changed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Podman, podmanVersion } from "../support/podman.js";
import { nodeBase, nodeBaseTag, servicesImage, servicesTag } from "../support/stand-in-images.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The tag the tests build the repository's Dockerfile as. */
export const APP_IMAGE = "localhost/mcp-tasks:test";

export interface Lab {
  podman: Podman;
  /** A temporary directory of the test's own. */
  dir: string;
  /** The services stand-in (PostgreSQL and nginx) for compose.yaml's official images. */
  services: string;
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

/** The stand-ins, made when missing, and the application image, built on the Node stand-in. */
export async function buildImages(): Promise<void> {
  const version = await podmanVersion();
  if (!version) {
    throw new Error("podman is not installed: the container tests need Debian's podman, runc and debootstrap (.ci/run installs them)");
  }
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-images-"));
  try {
    const podman = new Podman(dir);
    const base = await timed("Node stand-in base image (made once per machine)", () => nodeBase(podman));
    const image = { buildArgs: { NODE_IMAGE: base } };
    await timed(`podman build of the Dockerfile (${version})`, () => podman.build(REPO_ROOT, APP_IMAGE, image));
    await timed("services stand-in image (made once per machine)", () => servicesImage(podman, base));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Podman and a directory for one test file, on the images {@link buildImages} made. */
export function openLab(name: string): Lab {
  const dir = mkdtempSync(join(tmpdir(), `mcp-tasks-${name}-`));
  const prefix = `mcp-tasks-${name}-${process.pid}-${Date.now().toString(36)}`;
  return {
    podman: new Podman(join(dir, "podman")),
    dir,
    services: servicesTag(nodeBaseTag()),
    prefix,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
