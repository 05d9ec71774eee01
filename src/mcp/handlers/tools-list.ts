import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { SessionContext } from "../era.js";

/** `tools/list`, with `execution.taskSupport` per tool when tasks are on (T-TOOL). */
export function toolsList(session: SessionContext): { tools: Tool[] } {
  const tools: Tool[] = [];
  for (const tool of session.tools.values()) {
    const { definition } = tool;
    const inputSchema = z.toJSONSchema(definition.input, { io: "input" }) as Tool["inputSchema"];
    delete (inputSchema as Record<string, unknown>)["$schema"];
    tools.push({
      name: tool.name,
      ...(definition.title !== undefined && { title: definition.title }),
      ...(definition.description !== undefined && { description: definition.description }),
      inputSchema,
      ...(session.config.tasks && { execution: { taskSupport: definition.taskSupport ?? "forbidden" } }),
    });
  }
  return { tools };
}
