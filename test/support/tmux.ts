import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Whether tmux is installed (the PTY tests need it; `.ci/run` installs it). */
export function hasTmux(): boolean {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Quotes one word for /bin/sh. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A program running in a real pseudo-terminal (a detached tmux session): type into it as a person
 * would and read the screen. Each session has its own tmux server socket, so tests never touch a
 * user's tmux.
 */
export class TmuxTerminal {
  private constructor(
    private readonly socket: string,
    private readonly name: string,
  ) {}

  /** Starts `command` (a shell command line) in a `width`×`height` terminal. */
  static async start(command: string, options: { width?: number; height?: number } = {}): Promise<TmuxTerminal> {
    const id = `mcp-tasks-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const terminal = new TmuxTerminal(id, id);
    await terminal.tmux(["new-session", "-d", "-s", id, "-x", String(options.width ?? 120), "-y", String(options.height ?? 30), command]);
    return terminal;
  }

  /** The visible screen, lines joined with "\n". */
  async screen(): Promise<string> {
    const { stdout } = await this.tmux(["capture-pane", "-p", "-t", this.name]);
    return stdout;
  }

  /** Waits until the screen shows `text` (or matches it); the timeout turns a hang into a readable failure. */
  async waitFor(text: string | RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = await this.screen();
      if (typeof text === "string" ? last.includes(text) : text.test(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for ${String(text)} on the screen:\n${last}`);
  }

  /** Types literal text. */
  async type(text: string): Promise<void> {
    await this.tmux(["send-keys", "-t", this.name, "-l", text]);
  }

  /** Presses keys by tmux name: "Enter", "Down", "C-c", … */
  async press(...keys: string[]): Promise<void> {
    await this.tmux(["send-keys", "-t", this.name, ...keys]);
  }

  async close(): Promise<void> {
    await this.tmux(["kill-server"]).catch(() => {});
  }

  private tmux(args: string[]): Promise<{ stdout: string }> {
    return run("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }
}
