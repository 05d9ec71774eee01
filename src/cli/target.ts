import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { fileJournal } from "../client/task-journal.js";
import { TaskClient, type TaskClientOptions } from "../client/task-client.js";
import { RpcCode } from "../core/errors.js";
import { ConnectionError } from "../mcp/requestor-errors.js";
import { SessionStore, sessionKey } from "./session-store.js";

/** Where a requestor command talks to: a Streamable HTTP URL, or a command spawned for stdio. */
export type Target = { kind: "http"; url: string; token?: string } | { kind: "stdio"; command: string };

export interface Connection {
  client: Client;
  tasks: TaskClient;
  /** The target as a human reads it (journal entries, messages). */
  label: string;
  close(): Promise<void>;
}

type Handlers = Pick<TaskClientOptions, "elicit" | "sample" | "logger">;

const VERSION = "0.1.0";

/**
 * Connects a TaskClient to the target. Over HTTP the MCP session is kept per target between runs
 * (see SessionStore): a stored session is resumed without a new initialize, its liveness checked
 * with a ping; a dead one is replaced by a fresh session. Sessions are never ended by the CLI, so
 * a session with unfinished tasks stays usable.
 */
export async function connectTarget(target: Target, handlers: Handlers, dir: string): Promise<Connection> {
  const journal = fileJournal(join(dir, "journal.jsonl"));
  if (target.kind === "stdio") return connectStdio(target.command, handlers, journal);
  const sessions = new SessionStore(dir);
  const key = sessionKey(target.url, target.token);
  const stored = await sessions.load(key);
  const open = async (resume: typeof stored) => {
    const client = new Client({ name: "mcp-tasks-cli", version: VERSION });
    const tasks = new TaskClient(client, {
      ...handlers,
      journal,
      target: target.url,
      ...(resume && { serverCapabilities: resume.serverCapabilities }),
    });
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      ...(resume && { sessionId: resume.sessionId }),
      ...(target.token !== undefined && { requestInit: { headers: { Authorization: `Bearer ${target.token}` } } }),
      // A CLI run is short: no background reconnection loop outliving what it waits for.
      reconnectionOptions: { initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
    });
    await client.connect(transport);
    if (resume) {
      transport.setProtocolVersion(resume.protocolVersion);
      await client.ping({ timeout: 10_000 });
    }
    return { client, tasks, transport };
  };
  let connection;
  if (stored) {
    connection = await open(stored).catch(async () => {
      await sessions.forget(key);
      return null;
    });
  }
  if (!connection) {
    try {
      connection = await open(null);
    } catch (error) {
      throw new ConnectionError(`Cannot connect to ${target.url}: ${error instanceof Error ? error.message : String(error)}`, RpcCode.ConnectionClosed, error);
    }
    const { transport, client } = connection;
    if (transport.sessionId !== undefined) {
      await sessions.save(key, {
        target: target.url,
        sessionId: transport.sessionId,
        protocolVersion: transport.protocolVersion ?? "2025-11-25",
        serverCapabilities: client.getServerCapabilities() ?? {},
        savedAt: new Date().toISOString(),
      });
    }
  }
  const { client, tasks } = connection;
  return {
    client,
    tasks,
    label: target.url,
    async close() {
      await tasks.close();
      // Closes our side only (no HTTP DELETE): the session and its tasks live on for the next run.
      await client.close().catch(() => {});
    },
  };
}

async function connectStdio(command: string, handlers: Handlers, journal: ReturnType<typeof fileJournal>): Promise<Connection> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  // The command is one string, as a user types it: the shell splits it.
  const transport = new StdioClientTransport({ command: "/bin/sh", args: ["-c", command], env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const client = new Client({ name: "mcp-tasks-cli", version: VERSION });
  const tasks = new TaskClient(client, { ...handlers, journal, target: `stdio:${command}` });
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    const detail = stderr.trim() ? `\n${stderr.trim()}` : "";
    throw new ConnectionError(`Cannot start or talk to "${command}": ${error instanceof Error ? error.message : String(error)}${detail}`, RpcCode.ConnectionClosed, error);
  }
  return {
    client,
    tasks,
    label: `stdio:${command}`,
    async close() {
      await tasks.close();
      await client.close().catch(() => {});
    },
  };
}
