import pino from "pino";

/**
 * JSON-lines logs on stderr, always: in stdio mode stdout carries protocol messages only, and one
 * destination for both modes keeps operators' log shipping simple.
 */
export function createLogger(level: string): pino.Logger {
  return pino({ level, base: { service: "mcp-tasks" } }, pino.destination({ fd: 2, sync: false }));
}
