import { spawn } from "node:child_process";

/**
 * Opens `url` in the person's browser: `$BROWSER` when set (the usual convention: a command, `%s`
 * standing for the URL or the URL appended; the first of a colon-separated list), else the
 * platform's opener (`open`, `start`, `xdg-open`). Resolves false when nothing could be started;
 * the caller prints the URL either way, so a machine without a browser (ssh, a container) still
 * gets one to copy.
 */
export async function openBrowser(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const [command, ...args] = openerFor(url, env);
  if (command === undefined) return false;
  return await new Promise<boolean>((resolve) => {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

function openerFor(url: string, env: NodeJS.ProcessEnv): string[] {
  const configured = env["BROWSER"]?.split(":")[0]?.trim();
  if (configured) {
    const words = configured.split(/\s+/);
    return words.some((w) => w.includes("%s")) ? words.map((w) => w.replaceAll("%s", url)) : [...words, url];
  }
  if (process.platform === "darwin") return ["open", url];
  if (process.platform === "win32") return ["cmd", "/c", "start", '""', url];
  return ["xdg-open", url];
}
