/**
 * `mcp-tasks webhooks listen | list | redeliver` (docs/webhooks.md):
 * - `listen` is a receiver for development: it verifies each delivery's Standard Webhooks
 *   signature and prints the verified event as one JSON line (what `stripe listen` does);
 * - `list` and `redeliver` ask a server's web API, with its admin token, what was delivered where
 *   and queue deliveries again (after a receiver was down, or answered 410 Gone).
 */
import { createServer } from "node:http";
import { Command, InvalidArgumentError, Option } from "commander";
import { verifySignature, WebhookSignatureError } from "../runtime/webhooks/signature.js";
import { secretKey } from "../runtime/webhooks/signature.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { port } from "./options.js";
import { ExitCode } from "./exit-codes.js";
import { usageError } from "./requestor-options.js";

function secretOf(value: string): string {
  try {
    secretKey(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return value;
}

function serverOption(): Option {
  return new Option("--server <url>", "the server's base URL (its web API answers under /tasks/api)").makeOptionMandatory();
}

function adminTokenOption(): Option {
  return new Option("--admin-token <token>", "the server's admin token").env("MCP_TASKS_ADMIN_TOKEN").makeOptionMandatory();
}

async function webApi(server: string, token: string, path: string, init: RequestInit = {}): Promise<Record<string, unknown>> {
  const response = await fetch(new URL(path, server), {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined && { "content-type": "application/json" }) },
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const message = (body["error"] as { message?: string } | undefined)?.message ?? `HTTP ${response.status}`;
    process.stderr.write(`mcp-tasks webhooks: ${message}\n`);
    process.exit(response.status === 401 || response.status === 403 ? ExitCode.Usage : 1);
  }
  return body;
}

function listenCommand(): Command {
  return new Command("listen")
    .description("receive webhooks: verify each delivery's signature and print the event as a JSON line")
    .addOption(new Option("--port <n>", "port to listen on (0 picks a free one)").argParser(port).default(0))
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .addOption(
      new Option("--secret <whsec>", "the endpoint's secret (whsec_…)")
        .env("MCP_TASKS_WEBHOOK_SECRET")
        .argParser(secretOf)
        .makeOptionMandatory(),
    )
    .action((opts: { port: number; host: string; secret: string }) => {
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > 4 * 1024 * 1024) req.destroy();
          else chunks.push(chunk);
        });
        req.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          try {
            const event = verifySignature(opts.secret, req.headers, body) as Record<string, unknown>;
            process.stdout.write(`${JSON.stringify({ id: req.headers["webhook-id"], ...event })}\n`);
            res.writeHead(204).end();
          } catch (error) {
            const reason = error instanceof WebhookSignatureError ? error.message : "body is not JSON";
            process.stderr.write(`refused a delivery: ${reason}\n`);
            res.writeHead(401, { "content-type": "text/plain" }).end(`${reason}\n`);
          }
        });
      });
      server.listen(opts.port, opts.host, () => {
        const address = server.address();
        const bound = typeof address === "object" && address !== null ? address.port : opts.port;
        process.stderr.write(`listening for webhooks on http://${opts.host}:${bound}/\n`);
      });
      const stop = (): void => void server.close(() => process.exit(0));
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}

function listCommand(): Command {
  return new Command("list")
    .description("list a server's webhook deliveries, newest first (to one URL when given)")
    .argument("[url]", "only deliveries to this URL")
    .addOption(serverOption())
    .addOption(adminTokenOption())
    .option("--task <id>", "only this task's deliveries")
    .addOption(new Option("--state <state>", "only deliveries in this state").choices(["pending", "delivered", "dead"]))
    .option("--json", "print the API's JSON")
    .action(
      async (url: string | undefined, opts: { server: string; adminToken: string; task?: string; state?: string; json?: boolean }) => {
        const query = new URLSearchParams();
        if (url !== undefined) query.set("url", url);
        if (opts.task !== undefined) query.set("taskId", opts.task);
        if (opts.state !== undefined) query.set("state", opts.state);
        const body = await webApi(opts.server, opts.adminToken, `/tasks/api/webhooks?${query}`);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
          return;
        }
        for (const row of (body["deliveries"] as Array<Record<string, unknown>>) ?? []) {
          const fields = [
            row["id"],
            row["state"],
            `attempts=${String(row["attempts"])}`,
            `status=${String(row["lastStatus"] ?? "-")}`,
            row["type"],
            row["taskId"],
            row["url"],
          ];
          if (row["lastError"] !== null) fields.push(`error=${String(row["lastError"])}`);
          process.stdout.write(`${fields.join("  ")}\n`);
        }
        for (const entry of (body["disabled"] as Array<Record<string, unknown>>) ?? []) {
          process.stdout.write(`disabled  ${String(entry["url"])}  ${String(entry["reason"])}\n`);
        }
      },
    );
}

function redeliverCommand(): Command {
  const command: Command = new Command("redeliver")
    .description("send a URL's dead deliveries again and re-enable it (or one delivery by --id, or a task's by --task)")
    .argument("[url]", "the endpoint URL, exactly as configured")
    .addOption(serverOption())
    .addOption(adminTokenOption())
    .option("--id <webhook-id>", "one delivery (sent again even when it was delivered)")
    .option("--task <id>", "the dead deliveries of one task")
    .action(async (url: string | undefined, opts: { server: string; adminToken: string; id?: string; task?: string }) => {
      const given = [url, opts.id, opts.task].filter((value) => value !== undefined);
      if (given.length !== 1) usageError(command, new InvalidArgumentError("name exactly one of: a URL, --id, --task"));
      const body = url !== undefined ? { url } : opts.id !== undefined ? { id: opts.id } : { taskId: opts.task };
      const answer = await webApi(opts.server, opts.adminToken, "/tasks/api/webhooks/redeliver", {
        method: "POST",
        body: JSON.stringify(body),
      });
      process.stdout.write(`queued ${String(answer["queued"])}\n`);
    });
  return command;
}

/** Usage errors exit 2 (ExitCode.Usage), as for the other commands; help exits 0. */
function usageExits(command: Command): Command {
  return command.exitOverride((error) => {
    process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? ExitCode.Ok : ExitCode.Usage);
  });
}

export function webhooksCommand(): Command {
  const command = usageExits(new Command("webhooks").description(COMMAND_SUMMARIES.webhooks.description));
  for (const sub of [listenCommand(), listCommand(), redeliverCommand()]) command.addCommand(usageExits(sub));
  return command;
}
