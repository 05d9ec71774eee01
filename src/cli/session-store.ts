import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

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

/**
 * One file per target under `<stateDir>/sessions/`, mode 0600 (a session id is a credential).
 * Keyed by the target and the token used, so two principals never share a session.
 *
 * Why: some receivers (the SDK's own) bind tasks to the MCP session that created them; reusing
 * the session lets `call --detach` and a later `tasks result` meet the same tasks.
 */
export class SessionStore {
  constructor(private readonly dir: string) {}

  async load(key: string): Promise<StoredSession | null> {
    try {
      const value = JSON.parse(await readFile(this.path(key), "utf8")) as Partial<StoredSession>;
      if (typeof value.sessionId !== "string" || typeof value.protocolVersion !== "string") return null;
      return value as StoredSession;
    } catch {
      return null;
    }
  }

  async save(key: string, session: StoredSession): Promise<void> {
    await mkdir(join(this.dir, "sessions"), { recursive: true, mode: 0o700 });
    await writeFile(this.path(key), `${JSON.stringify(session, null, 2)}\n`, { mode: 0o600 });
  }

  async forget(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  private path(key: string): string {
    return join(this.dir, "sessions", `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
  }
}

/** The key of a target: its URL plus a digest of the token (the token itself is never written). */
export function sessionKey(url: string, token: string | undefined): string {
  return token === undefined ? url : `${url}#${createHash("sha256").update(token).digest("hex")}`;
}
