import { Command, Option } from "commander";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { ExitCode } from "./exit-codes.js";
import { usageError } from "./requestor-options.js";

interface EmitOptions {
  token?: string;
  owner?: string;
  json?: boolean;
  timeout: number;
}

/** `mcp-tasks events emit <url> <name> [json]`: `POST /events/{name}` on a server (docs/cli.md). */
export function eventsCommand(): Command {
  const events = new Command("events").description(COMMAND_SUMMARIES.events.description);
  const emit = new Command("emit")
    .description(
      "emit an event: every task of your owner waiting for NAME (ctx.waitForEvent) wakes with the JSON payload, e.g. approval/<taskId> for the demo tool approve",
    )
    .argument("<url>", "the server's URL (its MCP endpoint, e.g. http://127.0.0.1:3000/mcp, or its base)")
    .argument("<name>", "the event's name: 1–200 letters, digits and . _ : / @ -")
    .argument("[json]", "the payload, as JSON (default: null)")
    .addOption(new Option("--token <token>", "HTTP bearer token (the admin token may emit for any owner)").env("MCP_TASKS_TOKEN"))
    .option("--owner <key>", "with the admin token: the owner key whose tasks the event is for (as the web view shows it)")
    .option("--json", "machine-readable output on stdout")
    .addOption(new Option("--timeout <ms>", "give up on the server after this long").default(30_000).argParser(Number))
    .exitOverride((error) => {
      process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : ExitCode.Usage);
    })
    .action(async (url: string, name: string, json: string | undefined, opts: EmitOptions) => {
      let target: URL;
      let body: string;
      try {
        target = eventUrl(url, name, opts.owner);
        body = json === undefined ? "" : JSON.stringify(JSON.parse(json));
      } catch (error) {
        usageError(emit, error instanceof SyntaxError ? new Error(`the payload is not JSON: ${error.message}`) : error);
      }
      process.exitCode = await send(target, body, opts);
    });
  events.addCommand(emit);
  return events;
}

/** Where the event goes: `/events/<name>` on the server's origin, each segment of the name escaped. */
function eventUrl(given: string, name: string, owner: string | undefined): URL {
  let base: URL;
  try {
    base = new URL(given);
  } catch {
    throw new Error(`not a URL: ${given}`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new Error(`not an http(s) URL: ${given}`);
  const url = new URL(`/events/${name.split("/").map(encodeURIComponent).join("/")}`, base);
  if (owner !== undefined) url.searchParams.set("owner", owner);
  return url;
}

async function send(url: URL, body: string, opts: EmitOptions): Promise<number> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(opts.token !== undefined && { authorization: `Bearer ${opts.token}` }) },
      body,
      signal: AbortSignal.timeout(opts.timeout),
    });
  } catch (error) {
    const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    return fail(opts, `cannot reach ${url.origin}: ${reason}`, ExitCode.Connection);
  }
  const text = await response.text();
  let answer: { seq?: unknown; woken?: unknown; error?: { message?: unknown } } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not ours (a proxy's page): the status says enough.
  }
  if (response.ok && typeof answer.seq === "number" && typeof answer.woken === "number") {
    if (opts.json) process.stdout.write(`${JSON.stringify({ seq: answer.seq, woken: answer.woken })}\n`);
    else process.stdout.write(`emitted (seq ${answer.seq}): woke ${answer.woken} task${answer.woken === 1 ? "" : "s"}\n`);
    return ExitCode.Ok;
  }
  const message = typeof answer.error?.message === "string" ? answer.error.message : `HTTP ${response.status}`;
  const code =
    response.status === 401 || response.status === 403
      ? ExitCode.Authentication
      : response.status === 400 || response.status === 413
        ? ExitCode.Usage
        : response.ok || response.status === 404
          ? ExitCode.Connection
          : ExitCode.Failed;
  return fail(opts, `the server refused the event (HTTP ${response.status}): ${message}`, code);
}

function fail(opts: EmitOptions, message: string, code: number): number {
  if (opts.json) process.stdout.write(`${JSON.stringify({ error: { message } })}\n`);
  else process.stderr.write(`mcp-tasks: ${message}\n`);
  return code;
}
