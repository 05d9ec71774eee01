import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { SessionContext } from "../era.js";
import type { RegisteredTool } from "../tool-definition.js";

/** `tools/list`, with `execution.taskSupport` per tool when tasks are on (T-TOOL). */
export function toolsList(session: SessionContext): { tools: Tool[] } {
  const tools: Tool[] = [];
  for (const tool of session.tools.values()) {
    tools.push({
      ...describeTool(tool),
      ...(session.config.tasks && { execution: { taskSupport: tool.definition.taskSupport ?? "forbidden" } }),
    });
  }
  return { tools };
}

/** A tool as every era lists it: name, title, description and its arguments as JSON Schema. */
export function describeTool(tool: RegisteredTool): Tool {
  const { definition } = tool;
  const inputSchema = z.toJSONSchema(definition.input, { io: "input" }) as Tool["inputSchema"];
  delete (inputSchema as Record<string, unknown>)["$schema"];
  return {
    name: tool.name,
    ...(definition.title !== undefined && { title: definition.title }),
    ...(definition.description !== undefined && { description: definition.description }),
    inputSchema,
  };
}
