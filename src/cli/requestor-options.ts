import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { PROTOCOL_REVISIONS, type ProtocolRevision } from "../mcp/requestor/requestor-eras.js";
import { featuresOf, SESSION_REVISION } from "../mcp/requestor/requestor-eras.js";
import type { OAuthOptions } from "./oauth/oauth-session.js";
import type { Target } from "./target.js";

/** Options every requestor command takes. */
export interface RequestorOptions {
  stdio?: string;
  token?: string;
  json?: boolean;
  protocol?: ProtocolRevision | "auto";
  /** false under --no-browser. */
  browser?: boolean;
  clientId?: string;
  clientSecret?: string;
  clientMetadataUrl?: string;
  scope?: string;
  clientCredentials?: boolean;
  clientPrivateKey?: string;
  clientSigningAlg?: string;
}

/** Adds --stdio, --token, --protocol, --json and the OAuth options; makes usage errors exit 2 (help and version still exit 0). */
export function requestorCommand(name: string): Command {
  // The ordinary options are put in commander's default group ("Options:") before the OAuth ones,
  // so help lists them first; a command's own options join that group.
  const command = new Command(name)
    .addOption(
      new Option("--stdio <command>", "talk to a server spawned with this command over stdio (instead of <target>)").helpGroup(ORDINARY),
    )
    .addOption(new Option("--token <token>", "HTTP bearer token").env("MCP_TASKS_TOKEN").helpGroup(ORDINARY))
    .addOption(
      new Option(
        "--protocol <revision>",
        "speak this protocol revision; auto: server/discover decides, cached per target for an hour (default: auto)",
      )
        .choices([...PROTOCOL_REVISIONS, "auto"])
        .env("MCP_TASKS_PROTOCOL")
        .helpGroup(ORDINARY),
    )
    .addOption(new Option("--json", "machine-readable output on stdout").helpGroup(ORDINARY));
  return addOAuthOptions(command).exitOverride((error) => {
    process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2);
  });
}

/** Commander's heading of the options without a group of their own. */
const ORDINARY = "Options:";

/**
 * The command's positional arguments, each with a name and description for help: `[target]` first,
 * which under --stdio is absent (the words then shift left: takeTarget sorts them out). The
 * action receives them as one list.
 */
export function positionalArguments(
  command: Command,
  names: ReadonlyArray<readonly [string, string]>,
  action: (positionals: string[], options: never) => Promise<void>,
): Command {
  command.argument("[target]", "the server's Streamable HTTP URL (none under --stdio)");
  for (const [name, description] of names) command.argument(`[${name}]`, description);
  return command.action(async (...given: unknown[]) => {
    const positionals = given.slice(0, names.length + 1).filter((value): value is string => typeof value === "string");
    await action(positionals, given[names.length + 1] as never);
  });
}

/** The OAuth client options (used when an HTTP target asks for OAuth and no --token is given). */
export function addOAuthOptions(command: Command): Command {
  const group = "OAuth (when the server asks for it and no --token is given):";
  return command
    .addOption(new Option("--no-browser", "print the authorization URL instead of opening a browser").helpGroup(group))
    .addOption(
      new Option("--client-id <id>", "a client registered with the authorization server beforehand (else: dynamic registration)")
        .env("MCP_TASKS_CLIENT_ID")
        .helpGroup(group),
    )
    .addOption(
      new Option("--client-secret <secret>", "that client's secret (prefer the environment variable)")
        .env("MCP_TASKS_CLIENT_SECRET")
        .helpGroup(group),
    )
    .addOption(
      new Option(
        "--client-metadata-url <url>",
        "an https URL of this client's metadata document, used as client id where the server supports it (CIMD)",
      )
        .env("MCP_TASKS_CLIENT_METADATA_URL")
        .helpGroup(group),
    )
    .addOption(
      new Option("--scope <scopes>", "scopes to ask for when the server names none (space-separated)")
        .env("MCP_TASKS_SCOPE")
        .helpGroup(group),
    )
    .addOption(
      new Option(
        "--client-credentials",
        "a machine client: the client credentials grant, no browser (needs --client-id and a secret or --client-private-key)",
      ).helpGroup(group),
    )
    .addOption(
      new Option(
        "--client-private-key <file>",
        "with --client-credentials: authenticate with a JWT signed by this PKCS#8 PEM key (private_key_jwt)",
      ).helpGroup(group),
    )
    .addOption(new Option("--client-signing-alg <alg>", "the JWS algorithm of --client-private-key (default ES256)").helpGroup(group));
}

/** What the OAuth options say, for an HTTP target without --token. */
export function oauthOptionsOf(options: RequestorOptions): OAuthOptions {
  if (options.clientSecret !== undefined && options.clientId === undefined)
    throw new InvalidArgumentError("--client-secret needs --client-id");
  if (options.clientMetadataUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(options.clientMetadataUrl);
    } catch {
      url = undefined;
    }
    // SEP-991: the client id is an https URL with a path.
    if (url?.protocol !== "https:" || url.pathname === "/")
      throw new InvalidArgumentError(`--client-metadata-url must be an https URL with a path, not ${options.clientMetadataUrl}`);
  }
  let clientCredentials: OAuthOptions["clientCredentials"];
  if (options.clientCredentials) {
    if (options.clientId === undefined) throw new InvalidArgumentError("--client-credentials needs --client-id");
    if ((options.clientSecret === undefined) === (options.clientPrivateKey === undefined))
      throw new InvalidArgumentError("--client-credentials needs exactly one of --client-secret and --client-private-key");
    let privateKeyPem: string | undefined;
    if (options.clientPrivateKey !== undefined) {
      try {
        privateKeyPem = readFileSync(options.clientPrivateKey, "utf8");
      } catch (error) {
        throw new InvalidArgumentError(
          `--client-private-key ${options.clientPrivateKey}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    clientCredentials = {
      ...(privateKeyPem !== undefined && { privateKeyPem }),
      ...(options.clientSigningAlg !== undefined && { signingAlg: options.clientSigningAlg }),
    };
  } else if (options.clientPrivateKey !== undefined || options.clientSigningAlg !== undefined) {
    throw new InvalidArgumentError("--client-private-key and --client-signing-alg go with --client-credentials");
  }
  return {
    ...(clientCredentials !== undefined && { clientCredentials }),
    ...(options.browser === false && { noBrowser: true }),
    ...(options.scope !== undefined && { scope: options.scope }),
    ...(options.clientMetadataUrl !== undefined && { clientMetadataUrl: options.clientMetadataUrl }),
    ...(options.clientId !== undefined && {
      preRegistered: { client_id: options.clientId, ...(options.clientSecret !== undefined && { client_secret: options.clientSecret }) },
    }),
  };
}

/**
 * Splits positionals into the target and the rest: with --stdio there is no <target> positional.
 * A target must be an http(s) URL.
 */
export function takeTarget(positionals: string[], options: RequestorOptions): { target: Target; rest: string[] } {
  if (options.stdio !== undefined) {
    // A stdio server is spoken to in a session; an era whose requests stand alone is HTTP only.
    if (options.protocol !== undefined && options.protocol !== "auto" && !featuresOf(options.protocol).sessions) {
      throw new InvalidArgumentError(
        `--protocol ${options.protocol} needs an http(s) <target>: over --stdio the CLI speaks ${SESSION_REVISION}`,
      );
    }
    return { target: { kind: "stdio", command: options.stdio }, rest: positionals };
  }
  const [first, ...rest] = positionals;
  if (first === undefined) throw new InvalidArgumentError("missing <target>: an http(s) URL, or --stdio <command>");
  let url: URL;
  try {
    url = new URL(first);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${first} (give an http(s) URL, or --stdio <command>)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError(`not an http(s) URL: ${first}`);
  return {
    target: {
      kind: "http",
      url: url.href,
      ...(options.token !== undefined ? { token: options.token } : { oauth: oauthOptionsOf(options) }),
      ...(options.protocol !== undefined && options.protocol !== "auto" && { protocol: options.protocol }),
    },
    rest,
  };
}

/**
 * The target as command-line arguments, for hints the person can paste (shell-quoted; never the
 * token, which the person passes again with --token or MCP_TASKS_TOKEN).
 */
export function targetArgs(target: Target): string {
  return target.kind === "http" ? shellQuote(target.url) : `--stdio ${shellQuote(target.command)}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Reports a usage error the way commander does, and exits 2. */
export function usageError(command: Command, error: unknown): never {
  command.error(`error: ${error instanceof Error ? error.message : String(error)}`, { exitCode: 2, code: "mcp-tasks.usage" });
}
