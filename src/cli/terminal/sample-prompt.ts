import type * as Inquirer from "@inquirer/prompts";
import { prompts } from "./prompts.js";
import { McpError, type CreateMessageRequestParams, type CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";

/** Where a prompt renders and what withdraws it (inquirer's context). */
type Context = NonNullable<Parameters<typeof Inquirer.input>[1]>;

/**
 * A sampling request answered by the person at the terminal: the conversation is shown, they type
 * the reply the model would have given, or decline (a JSON-RPC error, as a client whose user
 * rejects sampling answers).
 */
export async function promptSampling(
  params: CreateMessageRequestParams,
  context: Context,
  write: (text: string) => void,
): Promise<CreateMessageResult> {
  const lines = ["The server asks for a model reply (sampling/createMessage):"];
  if (params.systemPrompt) lines.push(`  system: ${params.systemPrompt}`);
  for (const message of params.messages) {
    const parts = Array.isArray(message.content) ? message.content : [message.content];
    for (const part of parts) lines.push(`  ${message.role}: ${part.type === "text" ? part.text : `[${part.type}]`}`);
  }
  write(`${lines.join("\n")}\n`);
  try {
    const choice = await prompts().select(
      {
        message: "Reply?",
        choices: [
          { name: "Type the reply", value: "reply" },
          { name: "Decline", value: "decline" },
        ],
      },
      context,
    );
    if (choice === "reply") {
      const text = await prompts().input({ message: "Your reply (as the model)", required: true }, context);
      return { role: "assistant", content: { type: "text", text }, model: "human", stopReason: "endTurn" };
    }
  } catch (error) {
    if (!(error instanceof Error && error.name === "ExitPromptError")) throw error;
  }
  throw new McpError(-1, "The user declined the sampling request");
}
