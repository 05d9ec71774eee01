import { Command, InvalidArgumentError } from "commander";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { CredentialStore } from "./oauth/credential-store.js";
import { OAuthSession } from "./oauth/oauth-session.js";
import { printError, type Output } from "./output.js";
import { addOAuthOptions, oauthOptionsOf, usageError, type RequestorOptions } from "./requestor-options.js";
import { stateDir } from "./state-dir.js";

/**
 * `mcp-tasks auth login|status|logout <target>`: the OAuth credentials the CLI keeps per target
 * (oauth/credential-store.ts). `call`, `tasks` and `tools` sign in by themselves when a server asks;
 * `login` does it ahead (a script then runs without a browser), `logout` forgets everything kept.
 */
export function authCommand(): Command {
  const auth = new Command("auth").description(COMMAND_SUMMARIES.auth.description);
  const login: Command = addOAuthOptions(
    base("login", "sign in to the target's authorization server now (a new authorization in the browser)"),
  ).action(async (url: string, opts: RequestorOptions) => {
    let target: string;
    let options;
    try {
      target = targetUrl(url);
      options = oauthOptionsOf(opts);
    } catch (error) {
      usageError(login, error);
    }
    const out = outputOf(opts);
    try {
      const session = new OAuthSession(target, stateDir(), options);
      await session.login();
      const status = await statusOf(session.store);
      if (out.json) out.stdout.write(`${JSON.stringify(status)}\n`);
      else
        out.stderr.write(
          `Signed in to ${target}${status.issuer ? ` at ${status.issuer}` : ""}${status.scope ? ` (scope: ${status.scope})` : ""}.\n`,
        );
      process.exitCode = ExitCode.Ok;
    } catch (error) {
      printError(out, error);
      process.exitCode = exitCodeOf(error);
    }
  });
  const status: Command = base(
    "status",
    "show what is kept for the target: authorization server, client, scope, expiry; exit 1 when not signed in",
  ).action(async (url: string, opts: RequestorOptions) => {
    let target: string;
    try {
      target = targetUrl(url);
    } catch (error) {
      usageError(status, error);
    }
    const out = outputOf(opts);
    const found = await statusOf(new CredentialStore(stateDir(), target));
    if (out.json) {
      out.stdout.write(`${JSON.stringify(found)}\n`);
    } else if (!found.signedIn) {
      out.stderr.write(`Not signed in to ${target}${found.clientId ? ` (a client registration is kept: ${found.clientId})` : ""}.\n`);
    } else {
      const expiry =
        found.expiresAt === undefined
          ? "no expiry given"
          : Date.parse(found.expiresAt) > Date.now()
            ? `expires ${found.expiresAt}`
            : `expired ${found.expiresAt}`;
      const lines = [
        `target:               ${target}`,
        `authorization server: ${found.issuer ?? "(unknown)"}`,
        `client id:            ${found.clientId ?? "(none kept: pre-registered)"}`,
        `scope:                ${found.scope ?? "(none)"}`,
        `access token:         ${expiry}`,
        `refresh token:        ${found.refreshable ? "yes" : "no"}`,
      ];
      out.stdout.write(`${lines.join("\n")}\n`);
    }
    process.exitCode = found.signedIn ? ExitCode.Ok : ExitCode.Failed;
  });
  const logout: Command = base("logout", "forget the target's tokens, client registration and discovery (the server is not told)").action(
    async (url: string, opts: RequestorOptions) => {
      let target: string;
      try {
        target = targetUrl(url);
      } catch (error) {
        usageError(logout, error);
      }
      const store = new CredentialStore(stateDir(), target);
      const had = (await store.files()).length > 0;
      await store.forget("all");
      const out = outputOf(opts);
      if (out.json) out.stdout.write(`${JSON.stringify({ target, removed: had })}\n`);
      else
        out.stderr.write(
          had ? `Signed out of ${target}: its stored OAuth credentials are removed.\n` : `Nothing was stored for ${target}.\n`,
        );
      process.exitCode = ExitCode.Ok;
    },
  );
  return auth.addCommand(login).addCommand(status).addCommand(logout);
}

function base(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .argument("<target>", "the MCP server's http(s) URL, as given to `call`")
    .option("--json", "machine-readable output on stdout")
    .exitOverride((error) => {
      process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2);
    });
}

/** The target as `call` keys it (the URL's normalized form), so both find the same credentials. */
function targetUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${text}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError(`not an http(s) URL: ${text}`);
  return url.href;
}

function outputOf(opts: RequestorOptions): Output {
  return { json: opts.json === true, stdout: process.stdout, stderr: process.stderr };
}

interface AuthStatus {
  target: string;
  signedIn: boolean;
  issuer?: string;
  clientId?: string;
  scope?: string;
  /** ISO 8601, when the token response gave `expires_in`. */
  expiresAt?: string;
  refreshable: boolean;
}

async function statusOf(store: CredentialStore): Promise<AuthStatus> {
  const [stored, client, discovery] = await Promise.all([store.tokens(), store.client(), store.discovery()]);
  const issuer = stored?.tokens.issuer ?? client?.issuer ?? discovery?.authorizationServerUrl;
  const expiresIn = stored?.tokens.expires_in;
  return {
    target: store.target,
    signedIn: stored !== undefined,
    ...(issuer !== undefined && { issuer }),
    ...(client !== undefined && { clientId: client.client_id }),
    ...(stored?.grantedScope !== undefined && { scope: stored.grantedScope }),
    ...(stored !== undefined &&
      expiresIn !== undefined && { expiresAt: new Date(Date.parse(stored.savedAt) + expiresIn * 1000).toISOString() }),
    refreshable: stored?.tokens.refresh_token !== undefined,
  };
}
