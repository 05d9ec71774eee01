/**
 * `--webhook URL`, `--webhooks FILE` and `--webhook-allow-private ADDRESS` of `serve`, `worker`
 * and `gateway` (docs/webhooks.md). Checked before anything is opened: a bad file or a missing
 * secret is a usage error naming the problem, never a server that silently sends nothing.
 */
import { readFileSync } from "node:fs";
import { InvalidArgumentError, Option } from "commander";
import { parseWebhooks, singleWebhook, WebhookConfigError, type WebhooksInput } from "../runtime/webhooks/webhook-config.js";

export interface WebhookFlags {
  webhook?: string;
  webhooks?: string;
  webhookAllowPrivate?: string[];
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function webhookOptions(): Option[] {
  return [
    new Option(
      "--webhook <url>",
      "send every task's events (input_required, completed, failed, cancelled) to this URL as Standard Webhooks, signed with MCP_TASKS_WEBHOOK_SECRET (whsec_…)",
    ),
    new Option(
      "--webhooks <file>",
      "webhook endpoints per principal, each with its events and secret, and the URL prefixes a task may name (JSON, docs/webhooks.md)",
    ),
    new Option(
      "--webhook-allow-private <address>",
      "with --webhook: let it reach this private or loopback address or CIDR (refused by default; repeatable)",
    ).argParser(collect),
  ];
}

/**
 * The webhook configuration the flags give, checked (secrets resolved from `env`), or undefined.
 * @throws InvalidArgumentError naming the flag and the problem
 */
export function webhooksFrom(flags: WebhookFlags, env: NodeJS.ProcessEnv = process.env): WebhooksInput | undefined {
  if (flags.webhook !== undefined && flags.webhooks !== undefined) throw new InvalidArgumentError("give --webhook or --webhooks, not both");
  let input: WebhooksInput | undefined;
  let flag = "--webhook";
  if (flags.webhook !== undefined) input = singleWebhook(flags.webhook, flags.webhookAllowPrivate ?? []);
  else if (flags.webhooks !== undefined) {
    flag = `--webhooks ${flags.webhooks}`;
    if (flags.webhookAllowPrivate !== undefined)
      throw new InvalidArgumentError("--webhook-allow-private goes with --webhook; a --webhooks file says allowPrivate per endpoint");
    let text: string;
    try {
      text = readFileSync(flags.webhooks, "utf8");
    } catch (error) {
      throw new InvalidArgumentError(`${flag}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
    try {
      input = JSON.parse(text) as WebhooksInput;
    } catch (error) {
      throw new InvalidArgumentError(`${flag}: not JSON (${(error as Error).message})`);
    }
  } else if (flags.webhookAllowPrivate !== undefined) throw new InvalidArgumentError("--webhook-allow-private needs --webhook");
  if (input === undefined) return undefined;
  try {
    parseWebhooks(input, env);
  } catch (error) {
    if (error instanceof WebhookConfigError) {
      const hint =
        flags.webhook !== undefined && /secretEnv/.test(error.message) ? " (set MCP_TASKS_WEBHOOK_SECRET to a whsec_… secret)" : "";
      throw new InvalidArgumentError(`${flag}: ${error.message}${hint}`);
    }
    throw error;
  }
  return input;
}
