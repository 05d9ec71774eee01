import pino from "pino";

/**
 * Where a token could end up in a line: request headers (an error carrying its request), and any
 * field named for a credential. Tokens are never logged on purpose; this catches the accidents.
 */
const REDACTED_PATHS = [
  "authorization",
  "headers.authorization",
  "*.headers.authorization",
  "headers.cookie",
  "*.headers.cookie",
  "token",
  "*.token",
  "accessToken",
  "*.accessToken",
];

/**
 * JSON-lines logs on stderr, always: in stdio mode stdout carries protocol messages only, and one
 * destination for both modes keeps operators' log shipping simple. `destination` is for tests.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ fd: 2, sync: false })): pino.Logger {
  return pino({ level, base: { service: "mcp-tasks" }, redact: { paths: REDACTED_PATHS, censor: "[redacted]" } }, destination);
}
