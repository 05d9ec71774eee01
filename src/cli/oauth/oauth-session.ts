import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { AuthenticationError } from "../authentication-error.js";
import { openBrowser } from "./browser.js";
import { CliOAuthProvider, type ClientCredentialsGrant, type PreRegisteredClient } from "./cli-provider.js";
import { CredentialStore } from "./credential-store.js";
import { LoopbackRedirect } from "./loopback-redirect.js";

export interface OAuthOptions {
  /** Print the authorization URL only; open no browser. */
  noBrowser?: boolean;
  scope?: string;
  clientMetadataUrl?: string;
  preRegistered?: PreRegisteredClient;
  /** The client credentials grant instead of the browser (a machine client; needs `preRegistered`). */
  clientCredentials?: ClientCredentialsGrant;
  /** Default: 5 minutes. */
  timeoutMs?: number;
}

/** A token this close to its expiry (or half its lifetime, when shorter) is refreshed before use rather than sent. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * OAuth 2.1 for one HTTP target, as a fetch: the requests of a CLI run (the SDK transport's, the
 * stateless 2026-07-28 ones) go through {@link fetch}, which adds the stored bearer token and
 * answers the server's challenges itself, so every request — `initialize`, a `tools/call` in the
 * middle of a session, the GET stream — is authorized the same way:
 *
 * - 401 (RFC 6750; the MCP authorization spec): discovery from the WWW-Authenticate
 *   `resource_metadata` or the well-known PRM (RFC 9728), authorization server metadata (RFC 8414 /
 *   OpenID), registration (pre-registered, CIMD or RFC 7591), then a refresh if a refresh token is
 *   stored, else the browser: authorization code + PKCE S256 + `resource` (RFC 8707) to the
 *   loopback redirect. The request is then sent again, once: a second 401 is an authentication
 *   failure, not another round.
 * - 403 `insufficient_scope` (step-up): re-authorization for the union of the scope held and the
 *   one required, once per request, and only if the token lacks some of it — a server that refuses
 *   a scope it just granted will not change its mind, so the CLI stops (one authorization, not a loop).
 *
 * A 401 from a server that shows no OAuth metadata at all (a static-token server) is passed on
 * unchanged, so its own message about --token stands. Failures throw AuthenticationError (exit 6).
 */
export class OAuthSession {
  readonly store: CredentialStore;
  private readonly loopback = new LoopbackRedirect();
  private readonly provider: CliOAuthProvider;
  private authorizing: Promise<void> | null = null;

  constructor(
    readonly target: string,
    stateDir: string,
    private readonly options: OAuthOptions = {},
    private readonly stderr: NodeJS.WritableStream = process.stderr,
    private readonly baseFetch: typeof fetch = globalThis.fetch,
  ) {
    this.store = new CredentialStore(stateDir, target);
    this.provider = new CliOAuthProvider({
      store: this.store,
      loopback: this.loopback,
      timeoutMs: options.timeoutMs ?? 5 * 60_000,
      present: (url) => this.present(url),
      ...(options.scope !== undefined && { scope: options.scope }),
      ...(options.clientMetadataUrl !== undefined && { clientMetadataUrl: options.clientMetadataUrl }),
      ...(options.preRegistered !== undefined && { preRegistered: options.preRegistered }),
      ...(options.clientCredentials !== undefined && { clientCredentials: options.clientCredentials }),
    });
  }

  readonly fetch: typeof fetch = async (input, init) => {
    await this.refreshIfExpired();
    let response = await this.send(input, init);
    let authorized = false;
    let upscoped = false;
    for (;;) {
      if (response.status === 401) {
        if (authorized)
          throw new AuthenticationError(
            `Authentication failed at ${this.target}: the server refused the token its authorization server had just issued (HTTP 401)`,
            401,
            undefined,
          );
        const challenge = extractWWWAuthenticateParams(response);
        if (!(await this.authorizeFor(challenge))) return response;
        authorized = true;
      } else if (response.status === 403) {
        const challenge = extractWWWAuthenticateParams(response);
        if (challenge.error !== "insufficient_scope") return response;
        const held = scopes((await this.store.tokens())?.grantedScope);
        const required = scopes(challenge.scope);
        if (upscoped || required.length === 0 || required.every((s) => held.includes(s))) {
          throw new AuthenticationError(
            `Authentication failed at ${this.target}: the server requires the scope "${challenge.scope ?? ""}" (HTTP 403 insufficient_scope) and refuses the token that holds "${held.join(" ")}"; authorizing again would not change that`,
            403,
            undefined,
          );
        }
        // A refresh keeps the old scope: step-up needs a new authorization.
        await this.store.forget("tokens");
        await this.authorize({ scope: [...new Set([...held, ...required])].join(" "), resourceMetadataUrl: challenge.resourceMetadataUrl });
        upscoped = true;
      } else {
        return response;
      }
      await response.body?.cancel().catch(() => {});
      response = await this.send(input, init);
    }
  };

  /**
   * Signs in again now, without waiting for a challenge (`mcp-tasks auth login`): the stored
   * token is dropped (the registration kept), discovery from the well-known PRM, then the browser.
   */
  async login(): Promise<void> {
    await this.store.forget("tokens");
    try {
      await this.authorize({});
    } catch (error) {
      if (error instanceof AuthenticationError) throw error;
      if ((await this.store.discovery())?.resourceMetadata === undefined) {
        await this.store.forget("all");
        throw new AuthenticationError(
          `${this.target} publishes no OAuth protected resource metadata (RFC 9728): it does not use OAuth (use --token if it wants a bearer token)`,
          401,
          error,
        );
      }
      throw new AuthenticationError(`OAuth authorization for ${this.target} failed: ${messageOf(error)}`, 401, error);
    }
  }

  /** Authorizes for a 401's challenge; false when the server is not an OAuth resource at all. */
  private async authorizeFor(challenge: ReturnType<typeof extractWWWAuthenticateParams>): Promise<boolean> {
    try {
      await this.authorize({ scope: challenge.scope, resourceMetadataUrl: challenge.resourceMetadataUrl });
      return true;
    } catch (error) {
      if (error instanceof AuthenticationError) throw error;
      if (challenge.resourceMetadataUrl === undefined && (await this.store.discovery())?.resourceMetadata === undefined) {
        // No PRM anywhere: a bearer-token server that is not OAuth. Nothing of this attempt is kept.
        await this.store.forget("all");
        return false;
      }
      throw new AuthenticationError(`OAuth authorization for ${this.target} failed: ${messageOf(error)}`, 401, error);
    }
  }

  /** One flow at a time per run: requests challenged meanwhile wait for it and are sent again. */
  private async authorize(request: { scope?: string | undefined; resourceMetadataUrl?: URL | undefined }): Promise<void> {
    if (this.authorizing) return await this.authorizing;
    this.authorizing = this.runFlow(request).finally(() => {
      this.authorizing = null;
    });
    return await this.authorizing;
  }

  /**
   * The flow under the target's sign-in lock: a run that finds another signing in waits for it,
   * then goes on with the token it stored (the request is sent again; a 403 then steps up) — or
   * runs its own flow when that one ended without a token.
   */
  private async runFlow(request: { scope?: string | undefined; resourceMetadataUrl?: URL | undefined }): Promise<void> {
    const before = (await this.store.tokens())?.savedAt;
    const deadline = Date.now() + (this.options.timeoutMs ?? 5 * 60_000) + 30_000;
    let waited = false;
    for (;;) {
      const release = await this.store.tryLockFlow();
      if (release) {
        try {
          if (waited && (await this.store.tokens())?.savedAt !== before) return;
          return await this.flow(request);
        } finally {
          await release();
        }
      }
      if (!waited) this.stderr.write(`Another mcp-tasks run is signing in to ${this.target}; waiting for it.\n`);
      waited = true;
      if (Date.now() > deadline)
        throw new AuthenticationError(
          `Another mcp-tasks run has been signing in to ${this.target} for too long (${this.store.dir}/flow.lock)`,
          401,
          undefined,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  private async flow({ scope, resourceMetadataUrl }: { scope?: string | undefined; resourceMetadataUrl?: URL | undefined }): Promise<void> {
    const registered = await this.provider.clientInformation();
    // The port a stored registration names, when free: its redirect URI then matches exactly, for
    // authorization servers that do not allow any loopback port as RFC 8252 §7.3 asks.
    if (this.provider.interactive)
      await this.loopback.start(portOf(registered && "redirect_uris" in registered ? registered.redirect_uris[0] : undefined));
    const params = {
      serverUrl: this.target,
      fetchFn: this.baseFetch,
      ...(scope !== undefined && { scope }),
      ...(resourceMetadataUrl !== undefined && { resourceMetadataUrl }),
    };
    try {
      let result = await auth(this.provider, params);
      if (result === "REDIRECT") {
        const { code } = await this.provider.awaitCallback();
        result = await auth(this.provider, { ...params, authorizationCode: code });
      }
      if (result !== "AUTHORIZED") throw new AuthenticationError(`OAuth authorization for ${this.target} did not complete`, 401, undefined);
    } finally {
      await this.provider.endFlow().catch(() => {});
      await this.loopback.close();
    }
  }

  private async present(url: URL): Promise<void> {
    const opened = this.options.noBrowser ? false : await openBrowser(url.href);
    const how = opened ? "Your browser was opened to sign in; if it did not, open this URL:" : "Open this URL in a browser to sign in:";
    this.stderr.write(`${this.target} needs authorization (OAuth). ${how}\n${url.href}\n`);
  }

  /** An expired token with a refresh token is refreshed before the request (no 401 round trip); failing that, the request goes without. */
  private async refreshIfExpired(): Promise<void> {
    const stored = await this.store.tokens();
    if (!stored || !expired(stored.tokens.expires_in, stored.savedAt)) return;
    if (stored.tokens.refresh_token === undefined || this.authorizing) return;
    await this.authorize({}).catch(() => this.store.forget("tokens"));
  }

  private async send(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): Promise<Response> {
    const stored = await this.store.tokens();
    const headers = new Headers(init?.headers);
    if (stored && !(expired(stored.tokens.expires_in, stored.savedAt) && stored.tokens.refresh_token !== undefined)) {
      // MCP access tokens are bearer tokens (RFC 6750 §2.1), whatever case token_type is written in.
      headers.set("authorization", `Bearer ${stored.tokens.access_token}`);
    }
    return await this.baseFetch(input, { ...init, headers });
  }
}

function expired(expiresIn: number | undefined, savedAt: string): boolean {
  if (expiresIn === undefined) return false;
  return Date.parse(savedAt) + expiresIn * 1000 - Math.min(EXPIRY_MARGIN_MS, (expiresIn * 1000) / 2) <= Date.now();
}

function scopes(scope: string | undefined): string[] {
  return (scope ?? "").split(" ").filter((s) => s.length > 0);
}

function portOf(uri: string | undefined): number | undefined {
  if (uri === undefined) return undefined;
  try {
    const url = new URL(uri);
    return url.hostname === "127.0.0.1" && url.port !== "" ? Number(url.port) : undefined;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) parts.push(e.message);
  return parts.length > 0 ? parts.join(": ") : String(error);
}
