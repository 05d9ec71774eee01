import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../core/errors.js";
import type { RegisteredTool } from "./tool-definition.js";

/**
 * A tool with an outputSchema promises structured results that fit it ("Servers MUST provide
 * structured results that conform to this schema", MCP 2025-11-25 server/tools, Output Schema).
 * A result that breaks the promise is the server's failure, not a tool execution error the model
 * could act on: so it is a JSON-RPC error, -32603 (server/tools, Error Handling: protocol errors
 * cover server errors), the details in the message and nothing of the content echoed. A task
 * fails with the same error. An `isError` result is not checked: its content says what went wrong.
 */
export function checkStructuredContent(tool: RegisteredTool, result: CallToolResult): void {
  const schema = tool.definition.outputSchema;
  if (schema === undefined || result.isError === true) return;
  if (result.structuredContent === undefined) {
    throw new TaskError("internal", `Tool ${tool.name} has an outputSchema but returned no structuredContent`);
  }
  const parsed = schema.safeParse(result.structuredContent);
  if (!parsed.success) {
    const where = parsed.error.issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new TaskError(
      "internal",
      `Tool ${tool.name} returned structuredContent that does not fit its outputSchema (${where.join("; ")})`,
    );
  }
}
