import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { REPO_ROOT } from "./cli-process.js";

/** Debian's Chromium (`.ci/run` installs it when missing); CHROMIUM_PATH overrides. */
export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

/** Where browser tests leave screenshots (gitignored). */
export const ARTIFACTS = join(REPO_ROOT, "artifacts");

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile directory, deleted again on close. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "mcp-tasks-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    viewport: { width: 1480, height: 860 },
  });
  // Shorter than the test's own timeout, so a wait that fails says what it waited for.
  context.setDefaultTimeout(10_000);
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
