import type { GetPromptResult, Prompt, PromptArgument, PromptMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { TaskError } from "../../core/errors.js";
import type { Completer } from "./completer.js";
import type { FeatureContext } from "./feature-context.js";

/** The arguments of a prompt: a zod object whose fields are strings (MCP prompt arguments are). */
export type PromptArguments = z.ZodObject<Record<string, z.ZodType<string | undefined>>>;

/** Declares a prompt template. */
export interface PromptDefinition<A extends PromptArguments = PromptArguments> {
  title?: string;
  description?: string;
  /**
   * The arguments, as a zod object of string fields: advertised as `arguments: [{name,
   * description, required}]` (a field's `.describe()` is its description; `.optional()` makes it
   * not required). A `prompts/get` whose arguments fail it is -32602.
   */
  arguments?: A;
  /** Suggestions per argument, for `completion/complete` with a `ref/prompt`. */
  complete?: { readonly [K in keyof z.input<A>]?: Completer };
}

/** What a prompt handler returns: the messages, and optionally a description of this rendering. */
export interface PromptResult {
  description?: string;
  messages: PromptMessage[];
}

/** Renders a prompt from its parsed arguments (`prompts/get`). */
export type PromptHandler<A extends PromptArguments = PromptArguments> = (
  args: z.output<A>,
  ctx: FeatureContext,
) => PromptResult | Promise<PromptResult>;

export interface RegisteredPrompt {
  name: string;
  definition: PromptDefinition;
  /** As `prompts/list` shows them, computed once. */
  arguments: PromptArgument[];
  handler: PromptHandler;
}

/** The advertised arguments of a schema; a field that is not a string fails the registration. */
function argumentsOf(name: string, schema: PromptArguments | undefined): PromptArgument[] {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: "input" }) as {
    properties?: Record<string, { type?: unknown; description?: unknown }>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties ?? {}).map(([argument, property]) => {
    if (property.type !== "string")
      throw new Error(`Prompt ${name}: argument ${argument} must be a string field (MCP prompt arguments are strings)`);
    return {
      name: argument,
      ...(typeof property.description === "string" && { description: property.description }),
      required: required.has(argument),
    };
  });
}

export function registerPrompt(name: string, definition: PromptDefinition, handler: PromptHandler): RegisteredPrompt {
  return { name, definition, arguments: argumentsOf(name, definition.arguments), handler };
}

/** A prompt as `prompts/list` shows it. */
export function describePrompt({ name, definition, arguments: args }: RegisteredPrompt): Prompt {
  return {
    name,
    ...(definition.title !== undefined && { title: definition.title }),
    ...(definition.description !== undefined && { description: definition.description }),
    ...(args.length > 0 && { arguments: args }),
  };
}

/** Renders a prompt: its arguments checked against its schema first (a missing required one is -32602). */
export async function renderPrompt(
  prompt: RegisteredPrompt,
  args: Record<string, string> | undefined,
  ctx: FeatureContext,
): Promise<GetPromptResult> {
  const schema = prompt.definition.arguments ?? z.object({});
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
    throw TaskError.invalidParams(`Invalid arguments for prompt ${prompt.name}: ${issues.join("; ")}`);
  }
  const result = await prompt.handler(parsed.data, ctx);
  return { ...(result.description !== undefined && { description: result.description }), messages: result.messages };
}
