import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  OAuthClientInformationFullSchema,
  OAuthClientInformationSchema,
  OAuthTokensSchema,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { writeFileAtomic } from "../atomic-file.js";

/** Tokens as stored: what the SDK saved (with its `issuer` stamp), plus what expiry and step-up need. */
export interface StoredTokens {
  tokens: OAuthTokens;
  /** When they were received (ISO 8601): `expires_in` counts from here. */
  savedAt: string;
  /**
   * The scope the token carries: the token response's `scope`, else the one requested (RFC 6749
   * §5.1: an omitted scope is the requested one). Step-up compares a 403's required scope with it.
   */
  grantedScope?: string;
}

/** One file per kind of credential, replaced whole. */
type Kind = "tokens" | "client" | "discovery";

/**
 * A target's OAuth credentials in the CLI's state directory: `<stateDir>/oauth/<digest of the
 * target URL>/` holds `tokens.json`, `client.json` (the registration), `discovery.json` (PRM and
 * authorization server metadata, so a later run skips discovery) and `pkce-<digest of state>.json`
 * (the verifier of a flow in progress, removed once its code is exchanged). Directories are mode
 * 0700, files 0600 (tokens and client secrets are credentials), each replaced atomically
 * (atomic-file.ts): concurrent CLI runs read one whole version, never a torn file.
 *
 * The SDK stamps tokens and registrations with the authorization server (`issuer`) they came
 * from and ignores stamped values from another: kept as saved, a target whose authorization server
 * moves re-registers instead of presenting its refresh token elsewhere.
 */
export class CredentialStore {
  readonly dir: string;

  constructor(
    stateDir: string,
    readonly target: string,
  ) {
    this.dir = join(stateDir, "oauth", digest(target));
  }

  async tokens(): Promise<StoredTokens | undefined> {
    const value = await this.read<StoredTokens>("tokens");
    const tokens = OAuthTokensSchema.safeParse(value?.tokens);
    if (!tokens.success || typeof value?.savedAt !== "string") return undefined;
    return {
      tokens: tokens.data,
      savedAt: value.savedAt,
      ...(typeof value.grantedScope === "string" && { grantedScope: value.grantedScope }),
    };
  }

  async saveTokens(value: StoredTokens): Promise<void> {
    await this.write("tokens", value);
  }

  async client(): Promise<OAuthClientInformationMixed | undefined> {
    const value = await this.read<OAuthClientInformationMixed>("client");
    // A dynamic registration (RFC 7591: with its metadata), or a bare client id (CIMD).
    const full = OAuthClientInformationFullSchema.safeParse(value);
    if (full.success) return full.data;
    const bare = OAuthClientInformationSchema.safeParse(value);
    return bare.success ? bare.data : undefined;
  }

  async saveClient(value: OAuthClientInformationMixed): Promise<void> {
    await this.write("client", value);
  }

  async discovery(): Promise<OAuthDiscoveryState | undefined> {
    const value = await this.read<OAuthDiscoveryState>("discovery");
    // Written by this class from what the SDK discovered; the SDK reads its parts as it uses them.
    return typeof value?.authorizationServerUrl === "string" ? (value as OAuthDiscoveryState) : undefined;
  }

  async saveDiscovery(value: OAuthDiscoveryState): Promise<void> {
    await this.write("discovery", value);
  }

  async codeVerifier(state: string): Promise<string | undefined> {
    const value = await this.readFile<{ codeVerifier?: unknown }>(this.pkcePath(state));
    return typeof value?.codeVerifier === "string" ? value.codeVerifier : undefined;
  }

  async saveCodeVerifier(state: string, codeVerifier: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.pkcePath(state), `${JSON.stringify({ target: this.target, codeVerifier })}\n`, 0o600);
  }

  async forgetCodeVerifier(state: string): Promise<void> {
    await rm(this.pkcePath(state), { force: true });
  }

  /**
   * Takes the target's sign-in lock (`flow.lock`, created exclusively): one run at a time asks the
   * person, the others wait and use what it stored — four concurrent calls open one browser tab,
   * register one client. Resolves with its release, or null while a live run holds it. A lock
   * whose process is gone (killed mid-flow) is broken.
   */
  async tryLockFlow(): Promise<(() => Promise<void>) | null> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, "flow.lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await writeFile(path, `${JSON.stringify({ pid: process.pid, at: new Date().toISOString() })}\n`, { mode: 0o600, flag: "wx" });
        return async () => {
          await rm(path, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = await this.readFile<{ pid?: unknown }>(path);
      if (typeof holder?.pid === "number" && alive(holder.pid)) return null;
      // Not written yet by a run that just created it, or left by a dead one: only the latter is broken.
      if (holder === undefined) return null;
      await rm(path, { force: true });
    }
    return null;
  }

  /** Removes what `what` names ("all": the target's whole directory, flows in progress included). */
  async forget(what: Kind | "all"): Promise<void> {
    if (what === "all") await rm(this.dir, { recursive: true, force: true });
    else await rm(this.path(what), { force: true });
  }

  /** The files kept for the target (for `auth status`). */
  async files(): Promise<string[]> {
    return (await readdir(this.dir).catch(() => [] as string[])).filter((name) => name.endsWith(".json")).sort();
  }

  private async read<T>(kind: Kind): Promise<Partial<T> | undefined> {
    const value = await this.readFile<{ target?: unknown; value?: Partial<T> }>(this.path(kind));
    // A file of another target (a digest collision, or a hand-copied directory) is not ours.
    return value?.target === this.target ? value.value : undefined;
  }

  private async write(kind: Kind, value: unknown): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.path(kind), `${JSON.stringify({ target: this.target, value }, null, 2)}\n`, 0o600);
  }

  private async readFile<T>(path: string): Promise<T | undefined> {
    try {
      return JSON.parse(await readFile(path, "utf8")) as T;
    } catch {
      // Missing, or removed meanwhile by another run (logout): nothing stored.
      return undefined;
    }
  }

  private path(kind: Kind): string {
    return join(this.dir, `${kind}.json`);
  }

  private pkcePath(state: string): string {
    return join(this.dir, `pkce-${digest(state)}.json`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function digest(value: string): string {
  return createHash("sha256").update(value).digest("hex").slice(0, 32);
}
