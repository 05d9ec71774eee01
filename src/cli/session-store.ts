import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "./atomic-file.js";

/** What the CLI remembers of an MCP session between runs. */
export interface StoredSession {
  /** The target as given (URL), for humans reading the file. */
  target: string;
  sessionId: string;
  protocolVersion: string;
  /** The server's capabilities from the initialize that opened the session (T-CAP-3 needs them). */
  serverCapabilities: unknown;
  savedAt: string;
}

/** How many sessions are kept per target (the most recently saved). */
const KEPT_PER_TARGET = 50;

/**
 * The MCP sessions in which this user's CLI runs created tasks, one file each under
 * `<stateDir>/sessions/`, mode 0600 (a session id is a credential). Keyed by the target and the
 * token used, so two principals never share a session.
 *
 * Why: some receivers (the SDK's own, ours with `--bind session`) bind tasks to the MCP session
 * that created them; a later `tasks result` reaches such a task only from that session. Each run
 * opens its own session otherwise (see target.ts), so a session is stored only once a task was
 * created in it.
 */
export class SessionStore {
  constructor(private readonly dir: string) {}

  async load(key: string, sessionId: string): Promise<StoredSession | null> {
    try {
      const value = JSON.parse(await readFile(this.path(key, sessionId), "utf8")) as Partial<StoredSession>;
      if (value.sessionId !== sessionId || typeof value.protocolVersion !== "string") return null;
      return value as StoredSession;
    } catch {
      return null;
    }
  }

  /** The target's stored sessions, most recently saved first. */
  async all(key: string): Promise<StoredSession[]> {
    const prefix = `${digest(key)}.`;
    const names = await readdir(join(this.dir, "sessions")).catch(() => [] as string[]);
    const sessions: StoredSession[] = [];
    for (const name of names.filter((n) => n.startsWith(prefix) && n.endsWith(".json"))) {
      try {
        const value = JSON.parse(await readFile(join(this.dir, "sessions", name), "utf8")) as Partial<StoredSession>;
        if (typeof value.sessionId === "string" && typeof value.protocolVersion === "string") sessions.push(value as StoredSession);
      } catch {
        // removed meanwhile by another process: not a session any more
      }
    }
    return sessions.sort((a, b) => b.savedAt.localeCompare(a.savedAt));
  }

  async save(key: string, session: StoredSession): Promise<void> {
    await mkdir(join(this.dir, "sessions"), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.path(key, session.sessionId), `${JSON.stringify(session, null, 2)}\n`, 0o600);
    // One file per run that created a task: without a bound the directory only grows. A session
    // that old has most likely idled out on the server anyway.
    for (const old of (await this.all(key)).slice(KEPT_PER_TARGET)) await this.forget(key, old.sessionId);
  }

  async forget(key: string, sessionId: string): Promise<void> {
    await rm(this.path(key, sessionId), { force: true });
  }

  private path(key: string, sessionId: string): string {
    return join(this.dir, "sessions", `${digest(key)}.${digest(sessionId)}.json`);
  }
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex").slice(0, 32);
}

/** The key of a target: its URL plus a digest of the token (the token itself is never written). */
export function sessionKey(url: string, token: string | undefined): string {
  return token === undefined ? url : `${url}#${createHash("sha256").update(token).digest("hex")}`;
}
