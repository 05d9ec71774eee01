import { randomBytes } from "node:crypto";
import type { AddClientAuthentication, OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { createPrivateKeyJwtAuth } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CredentialStore } from "./credential-store.js";
import type { Callback, LoopbackRedirect } from "./loopback-redirect.js";

/** A client registered out of band (`--client-id`, `--client-secret`): used instead of registering. */
export interface PreRegisteredClient {
  client_id: string;
  client_secret?: string;
}

/**
 * The client credentials grant (OAuth 2.1 §4.2; SEP-1046): a machine client, no person, no
 * browser. It authenticates with its secret (client_secret_basic/post, as the server supports) or
 * with a JWT signed by its private key (private_key_jwt, RFC 7523).
 */
export interface ClientCredentialsGrant {
  /** PKCS#8 PEM, for private_key_jwt. */
  privateKeyPem?: string;
  /** Its JWS algorithm (default ES256). */
  signingAlg?: string;
}

export interface CliProviderOptions {
  store: CredentialStore;
  loopback: LoopbackRedirect;
  /** The scope to ask for when neither the server's challenge nor its metadata names one. */
  scope?: string;
  /** An https URL used as the client id where the authorization server accepts those (SEP-991, CIMD). */
  clientMetadataUrl?: string;
  preRegistered?: PreRegisteredClient;
  /** Instead of the authorization code flow (needs `preRegistered`). */
  clientCredentials?: ClientCredentialsGrant;
  /** How long a flow waits for the browser to come back. */
  timeoutMs: number;
  /** Shows the person the authorization URL (opens the browser, prints it). */
  present(url: URL): Promise<void>;
}

/**
 * The CLI's OAuthClientProvider (the SDK's client auth interface, driven by the SDK's `auth()`):
 * an authorization-code flow with PKCE for a native app — a loopback redirect URI (RFC 8252),
 * dynamic client registration unless pre-registered or a client metadata URL is accepted — with
 * everything it must remember (tokens, registration, discovery, the PKCE verifier) in the state
 * directory (CredentialStore), so the next run reuses the token or refreshes it instead of asking
 * again.
 */
export class CliOAuthProvider implements OAuthClientProvider {
  /** The `state` of the flow in progress (RFC 6749 §10.12): names its verifier file and is checked on the callback. */
  private flowState: string | null = null;
  /** The scope the flow in progress asked for: what the token carries when the response omits `scope`. */
  private requestedScope: string | undefined;
  private callback: Promise<Callback> | null = null;
  private client: OAuthClientInformationMixed | undefined;
  readonly clientMetadataUrl: string | undefined;
  /** Set for private_key_jwt only: otherwise the SDK picks the method the server supports. */
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(private readonly options: CliProviderOptions) {
    this.clientMetadataUrl = options.clientMetadataUrl;
    const grant = options.clientCredentials;
    if (grant?.privateKeyPem !== undefined) {
      const clientId = options.preRegistered?.client_id;
      if (clientId === undefined) throw new Error("private_key_jwt needs a client id");
      // RFC 7523 §3: iss and sub are the client id; the audience, the authorization server.
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: clientId,
        subject: clientId,
        privateKey: grant.privateKeyPem,
        alg: grant.signingAlg ?? "ES256",
      });
    }
  }

  /** No redirect for the client credentials grant: the SDK then asks the token endpoint directly. */
  get redirectUrl(): string | undefined {
    return this.options.clientCredentials ? undefined : this.options.loopback.redirectUrl;
  }

  get interactive(): boolean {
    return this.options.clientCredentials === undefined;
  }

  /** The client credentials grant's token request (for the authorization code flow: the SDK's own). */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.options.clientCredentials) return undefined;
    return new URLSearchParams({ grant_type: "client_credentials", ...(scope && { scope }) });
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.options.clientCredentials) {
      return {
        client_name: "mcp-tasks CLI",
        redirect_uris: [],
        grant_types: ["client_credentials"],
        token_endpoint_auth_method: this.options.clientCredentials.privateKeyPem !== undefined ? "private_key_jwt" : "client_secret_basic",
        ...(this.options.scope !== undefined && { scope: this.options.scope }),
      };
    }
    return {
      client_name: "mcp-tasks CLI",
      redirect_uris: [this.options.loopback.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A native app keeps no secret (RFC 8252 §8.5): a public client, PKCE instead.
      token_endpoint_auth_method: "none",
      ...(this.options.scope !== undefined && { scope: this.options.scope }),
    };
  }

  state(): string {
    this.flowState = randomBytes(24).toString("base64url");
    return this.flowState;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    // Read once per run: the code is exchanged by the client it was issued to, whatever another
    // run (another state directory user) writes meanwhile.
    if (this.options.preRegistered) return this.options.preRegistered;
    this.client ??= await this.options.store.client();
    return this.client;
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    // A pre-registered client comes from the command line each run; only registrations are kept.
    if (this.options.preRegistered) return;
    this.client = information;
    await this.options.store.saveClient(information);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.options.store.tokens())?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const previous = await this.options.store.tokens();
    // A refresh without `scope` keeps the scope the refreshed token had (RFC 6749 §6).
    const grantedScope = tokens.scope ?? this.requestedScope ?? previous?.grantedScope;
    this.requestedScope = undefined;
    await this.options.store.saveTokens({ tokens, savedAt: new Date().toISOString(), ...(grantedScope !== undefined && { grantedScope }) });
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.flowState === null) throw new Error("no flow state: the SDK asks for state() before redirecting");
    this.requestedScope = authorizationUrl.searchParams.get("scope") ?? undefined;
    // Listening for the callback before the browser opens: a fast redirect is never missed.
    this.callback = this.options.loopback.expect(this.flowState, this.options.timeoutMs);
    this.callback.catch(() => {});
    await this.options.present(authorizationUrl);
  }

  /** The code the browser brought back for the flow `redirectToAuthorization` started. */
  async awaitCallback(): Promise<Callback> {
    if (this.callback === null) throw new Error("no authorization in progress");
    try {
      return await this.callback;
    } finally {
      this.callback = null;
    }
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.flowState === null) throw new Error("no flow state: the SDK asks for state() before the verifier");
    await this.options.store.saveCodeVerifier(this.flowState, codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const verifier = this.flowState === null ? undefined : await this.options.store.codeVerifier(this.flowState);
    if (verifier === undefined) throw new Error("the PKCE verifier of this authorization is gone (removed by `mcp-tasks auth logout`?)");
    return verifier;
  }

  /** Drops the verifier of the finished flow: it is single-use (RFC 7636). */
  async endFlow(): Promise<void> {
    if (this.flowState !== null) await this.options.store.forgetCodeVerifier(this.flowState);
    this.flowState = null;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    const { store } = this.options;
    if (scope === "all" || scope === "tokens") await store.forget("tokens");
    if (scope === "all" || scope === "client") {
      this.client = undefined;
      await store.forget("client");
    }
    if (scope === "all" || scope === "discovery") await store.forget("discovery");
    if (scope === "all" || scope === "verifier") await this.endFlow();
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return await this.options.store.discovery();
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.options.store.saveDiscovery(state);
  }
}
