import { TaskError } from "../../../core/errors.js";
import { RemoteError } from "../requestor-errors.js";
import { METHOD, PROTOCOL_VERSION, TASKS_EXTENSION } from "../../wire/rev2026-07-28/wire.js";
import type { StatelessConnection } from "./stateless-connection.js";

/** What `server/discover` said (X-CAP-3). */
export interface Discovery {
  supportedVersions: string[];
  /** The server declares `io.modelcontextprotocol/tasks` (X-CAP-1): calls may become tasks. */
  tasks: boolean;
  /** The server declares `capabilities.tools.idempotency` (SEP-3182): a keyed call runs once however often it is sent. */
  idempotency: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `server/discover` with the 2026-07-28 envelope: the Discovery when the server speaks
 * 2026-07-28, null when it answers that it does not — a JSON-RPC error (a 2025-11-25-only server:
 * -32601, or the SDK's "Server not initialized" / "Bad Request" for a POST without a session), a
 * 4xx without one, or a discovery not listing the revision. A failure to reach the server at all,
 * or an authentication refusal, is thrown: it says nothing about the era.
 */
export async function discover(connection: StatelessConnection, signal?: AbortSignal): Promise<Discovery | null> {
  let result: Record<string, unknown>;
  try {
    result = await connection.request(
      METHOD.discover,
      {},
      { declareTasks: true, capabilities: {}, ...(signal !== undefined && { signal }) },
    );
  } catch (error) {
    if (error instanceof RemoteError) return null;
    if (error instanceof TaskError && /HTTP 4\d\d/.test(error.message)) return null;
    throw error;
  }
  const versions = Array.isArray(result["supportedVersions"])
    ? result["supportedVersions"].filter((v): v is string => typeof v === "string")
    : [];
  if (!versions.includes(PROTOCOL_VERSION)) return null;
  const capabilities = isObject(result["capabilities"]) ? result["capabilities"] : {};
  const extensions = isObject(capabilities["extensions"]) ? capabilities["extensions"] : {};
  const tools = isObject(capabilities["tools"]) ? capabilities["tools"] : {};
  return { supportedVersions: versions, tasks: Object.hasOwn(extensions, TASKS_EXTENSION), idempotency: isObject(tools["idempotency"]) };
}
