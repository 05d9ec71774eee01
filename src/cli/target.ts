import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PrivateRequestIds } from "../client/private-request-ids.js";
import { NotificationsBeforeClose } from "../client/notifications-before-close.js";
import { fileJournal, type TaskJournal } from "../client/task-journal.js";
import { TaskClient, type TaskClientOptions } from "../client/task-client.js";
import { chooseEra } from "../client/era-choice.js";
import {
  featuresOf,
  PROTOCOL_REVISIONS,
  SESSION_REVISION,
  STATELESS_REQUESTORS,
  type ProtocolRevision,
} from "../mcp/requestor/requestor-eras.js";
import type { HttpConnectionOptions } from "../mcp/requestor/requestor-era.js";
import { fileEraCache } from "./era-cache.js";
import { RpcCode } from "../core/errors.js";
import { ConnectionError } from "../mcp/requestor/requestor-errors.js";
import { connectionFailure } from "./connection-failure.js";
import { journalPath } from "./state-dir.js";
import { creationRecord } from "./task-creation-record.js";
import { trackWrite } from "./pending-writes.js";
import { SessionStore, sessionKey, type StoredSession } from "./session-store.js";
import { OAuthSession, type OAuthOptions } from "./oauth/oauth-session.js";

/** Where a requestor command talks to: a Streamable HTTP URL, or a command spawned for stdio. */
export type Target =
  { kind: "http"; url: string; token?: string; oauth?: OAuthOptions; protocol?: ProtocolRevision } | { kind: "stdio"; command: string };

type HttpTarget = Extract<Target, { kind: "http" }>;

export interface Connection {
  tasks: TaskClient;
  /** The target as a human reads it (journal entries, messages). */
  label: string;
  /** Waits for what the run wrote to the journal, without closing anything (a detach that leaves at once). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export type Handlers = Pick<TaskClientOptions, "elicit" | "sample" | "logger">;

/** Which MCP session to talk in (HTTP only). */
export interface SessionChoice {
  /** The task the command is about: resume the session the journal says created it, if stored. */
  taskId?: string;
  /** Resume this stored session; null (instead of a new session) when it is gone or dead. */
  sessionId?: string;
}

const VERSION = "0.1.0";

/**
 * Connects a TaskClient to the target, in the protocol era it speaks.
 *
 * The era of an HTTP target: `--protocol` when given; else, for a command about one task, the
 * era the journal says created it (a task is resumed by id in the era it lives in, whatever
 * discover would say now); else the era cache of the state directory (era-cache.ts); else
 * `server/discover` with the 2026-07-28 envelope decides (chooseEra). Under 2026-07-28 there is
 * no session at all: each request stands alone, so nothing below applies.
 *
 * Over HTTP under 2025-11-25 every run opens a session of its own, and resumes a stored one (see SessionStore) only
 * where a task was created in it. One session shared by concurrent processes cannot be right,
 * whatever the request ids: a Streamable HTTP server keeps one standalone GET stream per session
 * (the SDK's refuses a second with 409), so a task's progress and status, and any server→client
 * request not tied to an open request, go to whichever process holds that stream; and it answers a
 * request on the stream of the latest request with the same id (see PrivateRequestIds, which makes
 * ids unique as well, for the runs that do resume a session, possibly at once).
 *
 * A resumed session sends no new initialize, so the SDK transport never opens its GET stream by
 * itself (it does after `notifications/initialized`): it is opened here. Sessions are never ended
 * by the CLI, so a session with unfinished tasks stays usable.
 *
 * An HTTP target without --token goes through an OAuthSession (oauth/oauth-session.ts): a server
 * that answers 401 with OAuth metadata is authorized in the browser (or by the stored or refreshed
 * token) and every request of the run, discover included, carries the token.
 */
export async function connectTarget(target: Target, handlers: Handlers, dir: string, choice: SessionChoice = {}): Promise<Connection> {
  const journal = fileJournal(journalPath(dir));
  if (target.kind === "stdio") return connectStdio(target.command, handlers, journal);
  const fetchFn = target.oauth !== undefined ? new OAuthSession(target.url, dir, target.oauth).fetch : undefined;
  const protocol = await eraOf(target, journal, dir, choice.taskId, fetchFn);
  if (!featuresOf(protocol).sessions) return openStateless(target, protocol, handlers, journal, fetchFn);
  const sessions = new SessionStore(dir);
  const key = sessionKey(target.url, target.token);
  const wanted = choice.sessionId ?? (choice.taskId !== undefined ? await creatingSession(journal, target.url, choice.taskId) : undefined);
  const stored = wanted !== undefined ? await sessions.load(key, wanted) : null;
  let connection: Connection | null = null;
  if (stored) {
    connection = await openHttp(target, handlers, journal, sessions, key, stored, fetchFn).catch(async () => {
      await sessions.forget(key, stored.sessionId);
      return null;
    });
  }
  if (connection) return connection;
  if (choice.sessionId !== undefined) throw new ConnectionError(`The stored session ${choice.sessionId} is gone`, RpcCode.ConnectionClosed);
  try {
    return await openHttp(target, handlers, journal, sessions, key, null, fetchFn);
  } catch (error) {
    throw connectionFailure(target.url, error, target.token !== undefined);
  }
}

/** The target's stored sessions (those that created tasks), most recent first, at most `limit`. */
export async function storedSessions(target: Target, dir: string, limit: number): Promise<string[]> {
  if (target.kind !== "http") return [];
  const all = await new SessionStore(dir).all(sessionKey(target.url, target.token));
  return all.slice(0, limit).map((s) => s.sessionId);
}

async function eraOf(
  target: HttpTarget,
  journal: TaskJournal,
  dir: string,
  taskId: string | undefined,
  fetchFn: typeof fetch | undefined,
): Promise<ProtocolRevision> {
  if (target.protocol !== undefined) return target.protocol;
  if (taskId !== undefined) {
    const entries = await journal.entries().catch(() => []);
    const created = creationRecord(entries, taskId, target.url);
    // Entries from before 2026-07-28 carry no protocol: they were 2025-11-25.
    if (created) return created.protocol !== undefined && isRevision(created.protocol) ? created.protocol : SESSION_REVISION;
  }
  try {
    return await chooseEra(target.url, connectionOptions(target, fetchFn), { cache: fileEraCache(dir) });
  } catch (error) {
    throw connectionFailure(target.url, error, target.token !== undefined);
  }
}

function connectionOptions(target: HttpTarget, fetchFn: typeof fetch | undefined): HttpConnectionOptions {
  return {
    clientInfo: { name: "mcp-tasks-cli", version: VERSION },
    ...(target.token !== undefined && { token: target.token }),
    ...(fetchFn !== undefined && { fetch: fetchFn }),
  };
}

/** A connection of a stateless era: nothing to open; the first request is the first contact. */
function openStateless(
  target: HttpTarget,
  protocol: ProtocolRevision,
  handlers: Handlers,
  journal: TaskJournal,
  fetchFn: typeof fetch | undefined,
): Connection {
  const era = STATELESS_REQUESTORS.find((candidate) => candidate.revision === protocol);
  if (!era) throw new Error(`No stateless requestor era speaks ${protocol}`);
  const written = trackedJournal(journal);
  const tasks = new TaskClient(era.connect(target.url, connectionOptions(target, fetchFn)), {
    ...handlers,
    journal: written,
    target: target.url,
  });
  return {
    tasks,
    label: target.url,
    settle: () => written.settle(),
    async close() {
      await tasks.close();
    },
  };
}

async function creatingSession(journal: TaskJournal, url: string, taskId: string): Promise<string | undefined> {
  const entries = await journal.entries().catch(() => []);
  return entries.findLast((e) => e.op === "created" && e.taskId === taskId && e.target === url && e.session !== undefined)?.session;
}

async function openHttp(
  target: HttpTarget,
  handlers: Handlers,
  journal: TaskJournal,
  sessions: SessionStore,
  key: string,
  resume: StoredSession | null,
  fetchFn: typeof fetch | undefined,
): Promise<Connection> {
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    ...(fetchFn !== undefined && { fetch: fetchFn }),
    ...(resume && { sessionId: resume.sessionId }),
    ...(target.token !== undefined && { requestInit: { headers: { Authorization: `Bearer ${target.token}` } } }),
    // A CLI run is short: no background reconnection loop outliving what it waits for.
    reconnectionOptions: { initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
  const client = new Client({ name: "mcp-tasks-cli", version: VERSION });
  let saved: Promise<void> | null = resume ? Promise.resolve() : null;
  const pending = new Set<Promise<void>>();
  // A task created in this session makes the session worth keeping, and the journal says where it lives.
  const recording: TaskJournal = {
    record(entry) {
      const sessionId = transport.sessionId;
      if (entry.op !== "created" || sessionId === undefined) return track(journal.record(entry));
      saved ??= sessions.save(key, {
        target: target.url,
        sessionId,
        protocolVersion: transport.protocolVersion ?? SESSION_REVISION,
        serverCapabilities: client.getServerCapabilities() ?? resume?.serverCapabilities ?? {},
        savedAt: new Date().toISOString(),
      });
      return track(saved.then(() => journal.record({ ...entry, session: sessionId })));
    },
    entries: () => journal.entries(),
  };
  function track(write: Promise<void>): Promise<void> {
    pending.add(trackWrite(write));
    void write.finally(() => pending.delete(write)).catch(() => {});
    return write;
  }
  const tasks = new TaskClient(client, {
    ...handlers,
    journal: recording,
    target: target.url,
    ...(resume && { serverCapabilities: resume.serverCapabilities }),
  });
  try {
    await client.connect(new PrivateRequestIds(new NotificationsBeforeClose(transport)));
    if (resume) {
      transport.setProtocolVersion(resume.protocolVersion);
      await client.ping({ timeout: 10_000 });
      // "" is no event id: a new stream, not a replay. Not awaited, as the SDK does not after an
      // initialize: a server or proxy that holds back the stream's headers until its first event
      // must not stall the command. Refused (409) while another run holds the session's stream —
      // that run is then the one its notifications are for; polling still works.
      void transport.resumeStream("").catch(() => {});
    }
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return {
    tasks,
    label: target.url,
    async settle() {
      await Promise.allSettled([...pending]);
    },
    async close() {
      await tasks.close();
      await Promise.allSettled([...pending]);
      // Closes our side only (no HTTP DELETE): the session and its tasks live on for the next run.
      await client.close().catch(() => {});
    },
  };
}

async function connectStdio(command: string, handlers: Handlers, journal: TaskJournal): Promise<Connection> {
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  // The command is one string, as a user types it: the shell splits it.
  const transport = new StdioClientTransport({ command: "/bin/sh", args: ["-c", command], env, stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const client = new Client({ name: "mcp-tasks-cli", version: VERSION });
  const written = trackedJournal(journal);
  const tasks = new TaskClient(client, { ...handlers, journal: written, target: `stdio:${command}` });
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    const detail = stderr.trim() ? `\n${stderr.trim()}` : "";
    throw new ConnectionError(
      `Cannot start or talk to "${command}": ${error instanceof Error ? error.message : String(error)}${detail}`,
      RpcCode.ConnectionClosed,
      error,
    );
  }
  return {
    tasks,
    label: `stdio:${command}`,
    settle: () => written.settle(),
    async close() {
      await tasks.close();
      await client.close().catch(() => {});
    },
  };
}

function isRevision(value: string): value is ProtocolRevision {
  return (PROTOCOL_REVISIONS as readonly string[]).includes(value);
}

/** A journal whose writes can be waited for. */
function trackedJournal(journal: TaskJournal): TaskJournal & { settle(): Promise<void> } {
  const pending = new Set<Promise<void>>();
  return {
    record(entry) {
      const write = trackWrite(journal.record(entry));
      pending.add(write);
      void write.finally(() => pending.delete(write)).catch(() => {});
      return write;
    },
    entries: () => journal.entries(),
    async settle() {
      await Promise.allSettled([...pending]);
    },
  };
}
