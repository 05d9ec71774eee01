import type { McpServer, RegisteredTool as SdkRegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/*
 * The only place that reads private fields of the SDK (1.x, checked against 1.32): McpServer
 * offers no public way to look up a registered tool's callback and schema by name, nor Protocol
 * a way to read the handler installed for a method, and both are needed to wrap — not replace —
 * the SDK's own tools/list and tools/call. test/sdk-server/sdk-internals.test.ts breaks when an
 * SDK release renames or reshapes any of them.
 */

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/** McpServer's live map of registered tools (`_registeredTools`), read at each call so update/remove/disable count. */
export function registeredToolsOf(mcpServer: McpServer): Readonly<Record<string, SdkRegisteredTool>> {
  const tools = (mcpServer as unknown as { _registeredTools?: unknown })._registeredTools;
  if (typeof tools !== "object" || tools === null)
    throw new Error("This @modelcontextprotocol/sdk McpServer has no registered-tools map (an SDK change?)");
  return tools as Record<string, SdkRegisteredTool>;
}

/** The handler the SDK installed for `method` (Protocol's `_requestHandlers`), or undefined. */
export function requestHandlerOf(server: Server, method: string): RequestHandler | undefined {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) throw new Error("This @modelcontextprotocol/sdk Server has no request-handler map (an SDK change?)");
  return handlers.get(method) as RequestHandler | undefined;
}

/**
 * Whether the SDK's own experimental task machinery is on for this server (`taskStore` given to
 * its constructor): it then answers tasks/* from its store and queues replies of related-task
 * requests, which would fight our engine.
 */
export function hasSdkTaskStore(server: Server): boolean {
  return (server as unknown as { _taskStore?: unknown })._taskStore !== undefined;
}
