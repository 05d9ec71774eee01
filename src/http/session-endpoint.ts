import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/**
 * What the MCP endpoint's path hands each authenticated request to: sessions held by this process
 * ({@link LocalSessionEndpoint}) or signed sessions any node serves ({@link SharedSessionEndpoint}).
 */
export interface SessionEndpoint {
  /** A POST whose body has been read and parsed; a promise while it is answered, which rejects with what it could not answer. */
  post(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: AuthInfo | undefined,
    principal: string | null,
  ): void | Promise<void>;
  get(req: IncomingMessage, res: ServerResponse, principal: string | null): void | Promise<void>;
  delete(req: IncomingMessage, res: ServerResponse, principal: string | null): void | Promise<void>;
  close(): void | Promise<void>;
}
