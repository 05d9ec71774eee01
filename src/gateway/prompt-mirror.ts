import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Prompt } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Completer } from "../mcp/features/completer.js";
import type { PromptArguments } from "../mcp/features/prompts.js";
import type { TaskServer } from "../mcp/task-server.js";
import { upstreamCompleter } from "./upstream-completer.js";
import type { UpstreamConnection } from "./upstream-connection.js";
import { listAll } from "./upstream-lists.js";

/** A prompt's listed arguments as the zod object TaskServer prompts take (strings; optional unless required). */
function argumentsOf(prompt: Prompt): PromptArguments {
  const shape: Record<string, z.ZodType<string | undefined>> = {};
  for (const argument of prompt.arguments ?? []) {
    // Described last: zod keeps a description on the outermost schema (an .optional() wrapper would lose it).
    const field = argument.required ? z.string() : z.string().optional();
    shape[argument.name] = argument.description === undefined ? field : field.describe(argument.description);
  }
  return z.object(shape);
}

/** The upstream's prompts as the gateway's: rendered by the upstream, arguments completed by it. */
export class PromptMirror {
  private readonly mirrored = new Map<string, string>();

  constructor(
    private readonly app: TaskServer,
    private readonly upstream: UpstreamConnection,
  ) {}

  async sync(client: Client): Promise<void> {
    const capabilities = client.getServerCapabilities();
    if (!capabilities?.prompts) return;
    const prompts = await listAll(async (cursor) => {
      const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
      return { items: page.prompts, nextCursor: page.nextCursor };
    });
    const seen = new Set<string>();
    for (const prompt of prompts) {
      seen.add(prompt.name);
      const json = JSON.stringify(prompt);
      if (this.mirrored.get(prompt.name) === json) continue;
      if (this.mirrored.has(prompt.name)) this.app.removePrompt(prompt.name);
      this.mirrored.set(prompt.name, json);
      const complete: Record<string, Completer> = {};
      if (capabilities.completions) {
        for (const argument of prompt.arguments ?? []) {
          complete[argument.name] = upstreamCompleter(this.upstream, { type: "ref/prompt", name: prompt.name }, argument.name);
        }
      }
      const name = prompt.name;
      this.app.prompt(
        name,
        {
          ...(prompt.title !== undefined && { title: prompt.title }),
          ...(prompt.description !== undefined && { description: prompt.description }),
          arguments: argumentsOf(prompt),
          complete,
        },
        async (args, ctx) => {
          const upstream = await this.upstream.client();
          const strings = Object.fromEntries(Object.entries(args).filter((e): e is [string, string] => typeof e[1] === "string"));
          const result = await upstream.getPrompt({ name, arguments: strings }, { signal: ctx.signal });
          return { ...(result.description !== undefined && { description: result.description }), messages: result.messages };
        },
      );
    }
    for (const name of [...this.mirrored.keys()]) {
      if (seen.has(name)) continue;
      this.app.removePrompt(name);
      this.mirrored.delete(name);
    }
  }
}
