/**
 * What each subcommand is, in one line, and how the top-level help names it: shared by the
 * commands themselves and by `mcp-tasks --help`, which lists them without loading any of them.
 */
export const COMMAND_SUMMARIES = {
  serve: { term: "serve [options]", description: "Serve MCP tools with durable tasks over Streamable HTTP (default) or stdio" },
  gateway: {
    term: "gateway [options]",
    description:
      "Give an existing MCP server (stdio command or URL) durable tasks: serve its tools, resources and prompts through mcp-tasks",
  },
  worker: { term: "worker [options]", description: "Run queued tasks of a cluster (PostgreSQL store) without serving MCP" },
  call: {
    term: "call [options] [target] [tool] [json-args]",
    description:
      "Call a tool and follow it to its end: as a task when the tool requires one or --task asks (2025-11-25), or when the server makes one (2026-07-28)",
  },
  tasks: { term: "tasks", description: "List, inspect, wait for and cancel tasks on a server" },
  tools: { term: "tools", description: "Show the tools a server offers; pause and resume one across a cluster" },
  events: { term: "events", description: "Emit events that wake tasks waiting for them (ctx.waitForEvent)" },
  auth: { term: "auth", description: "Sign in to a server's OAuth authorization server, show or forget what is kept" },
  webhooks: { term: "webhooks", description: "Receive and verify webhooks (listen), list a server's deliveries and redeliver them" },
} as const;

export type CommandName = keyof typeof COMMAND_SUMMARIES;
