import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { TaskProtocolServer } from "../mcp/task-protocol-server.js";

/** One Streamable HTTP session: its transport, its server, and who opened it. */
export interface HttpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  server: TaskProtocolServer;
  /** The principal that initialized the session; null without auth. */
  principal: string | null;
}

/** Live sessions by id. A session is only ever served to the principal that created it. */
export class SessionRegistry {
  private readonly sessions = new Map<string, HttpSession>();

  add(session: HttpSession): void {
    this.sessions.set(session.id, session);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  /** The session, if it exists and belongs to `principal`; otherwise null (indistinguishable). */
  lookup(id: string, principal: string | null): HttpSession | null {
    const session = this.sessions.get(id);
    if (!session || session.principal !== principal) return null;
    return session;
  }

  get size(): number {
    return this.sessions.size;
  }

  all(): HttpSession[] {
    return [...this.sessions.values()];
  }
}
