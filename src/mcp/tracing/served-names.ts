import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../core/errors.js";
import { TASK_TOOLS } from "../fallback/task-tools.js";
import type { RegisteredTool } from "../tool-definition.js";

/**
 * What a method, tool or prompt name the server does not serve becomes in metric labels and
 * attributes and in span names and attributes. A caller chooses the names it sends: recorded as
 * sent, each unknown one would be a new series of `mcp_server_operation_duration_seconds` (and
 * a new span name) for good, so `/metrics` and a trace backend would grow without bound.
 */
export const UNKNOWN_NAME = "_unknown";

/**
 * What an error type the server does not define becomes (the OpenTelemetry conventions' fallback
 * value of `error.type`): a tool, or a gateway's upstream, may answer any JSON-RPC code.
 */
export const OTHER_ERROR_TYPE = "_OTHER";

/** The names a server serves, asked when a request's operation is recorded (tools come and go: a gateway mirrors its upstream's list). */
export interface ServedNames {
  /** Whether the server answers this method (else it gets -32601). */
  method(name: string): boolean;
  /** Whether `name` is a tool (tools/call) or prompt (prompts/get) the server has. */
  target(method: string, name: string): boolean;
}

/** What a server has, for {@link servedNames}. */
export interface ServedRegistries {
  tools: ReadonlyMap<string, RegisteredTool>;
  prompts?: ReadonlyMap<string, unknown> | undefined;
}

/**
 * The names served by a server with these tools and prompts, answering the methods `method` says.
 * The fallback's `task_*` tools count as tools: a fixed set of four.
 */
export function servedNames(registries: ServedRegistries, method: (name: string) => boolean): ServedNames {
  const taskTools: readonly string[] = TASK_TOOLS;
  return {
    method,
    target(operation, name) {
      if (operation === "tools/call") return registries.tools.has(name) || taskTools.includes(name);
      if (operation === "prompts/get") return registries.prompts?.has(name) ?? false;
      return false;
    },
  };
}

/** A method and target as they may be recorded: each the server's own, or {@link UNKNOWN_NAME}. */
export function boundedNames(served: ServedNames, method: string, target: string | undefined): { method: string; target?: string } {
  if (!served.method(method)) return { method: UNKNOWN_NAME, ...(target !== undefined && { target: UNKNOWN_NAME }) };
  if (target === undefined) return { method };
  return { method, target: served.target(method, target) ? target : UNKNOWN_NAME };
}

/** The JSON-RPC codes the server and its SDK define (ours, JSON-RPC 2.0's and the SDK's), as `error.type` strings. */
const KNOWN_ERROR_TYPES: ReadonlySet<string> = new Set([
  "tool_error",
  // ErrorCode is a numeric enum: its values hold its names too.
  ...[...Object.values(RpcCode), ...Object.values(ErrorCode)].filter((code): code is number => typeof code === "number").map(String),
]);

/** An `error.type` as it may be recorded: a code the server defines, `tool_error`, or {@link OTHER_ERROR_TYPE}. */
export function boundedErrorType(errorType: string): string {
  return KNOWN_ERROR_TYPES.has(errorType) ? errorType : OTHER_ERROR_TYPE;
}
