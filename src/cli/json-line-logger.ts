import type { Logger } from "../core/logger.js";

/** Where log lines go: one `write` per line (a held batch of lines may come in one). */
export interface LineDestination {
  write(text: string): void;
  flush?(): void;
}

/** The levels `--log-level` takes, with the numbers the lines carry (pino's, which log tools and pino-pretty read). */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;

export type LogLevelName = keyof typeof LOG_LEVELS;

type Fields = Record<string, unknown>;

export interface JsonLineLoggerOptions {
  /** The lowest level written (`silent`: none). */
  level: string;
  /** Fields on every line, after `level` and `time`. */
  base: Fields;
  /** Applied to each line's fields (the mixin's and the call's) before they are written: the credential censor. */
  format?: (fields: Fields) => Fields;
  /** Fields computed for each line (the active trace and span); the call's own fields win. */
  mixin?: () => Fields;
}

/**
 * The CLI's logger: one JSON object per line, written synchronously to its destination, in the
 * line shape pino writes (`level` as a number, `time` in epoch milliseconds, the base fields, the
 * call's fields, `msg` last; an `err` field or an Error passed as the fields serialized with its
 * type, message, stack and causes), so log shippers and pino-pretty read it as pino's.
 *
 * The CLI used pino for exactly this: synchronous lines (the audit guarantee, src/cli/logger.ts),
 * redaction in its own formatter (src/cli/credential-censor.ts). What else pino brings —
 * asynchronous writers, worker-thread transports, path-based redaction — the CLI did not use, and
 * its packages were 2.6 MB of every library install (docs/packaging.md).
 */
export class JsonLineLogger implements Logger {
  private readonly threshold: number;

  constructor(
    private readonly options: JsonLineLoggerOptions,
    private readonly destination: LineDestination,
  ) {
    if (!Object.hasOwn(LOG_LEVELS, options.level)) {
      throw new Error(`unknown log level "${options.level}" (one of ${Object.keys(LOG_LEVELS).join(", ")})`);
    }
    this.threshold = LOG_LEVELS[options.level as LogLevelName];
  }

  trace(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.trace, fields, msg);
  }
  debug(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.debug, fields, msg);
  }
  info(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.info, fields, msg);
  }
  warn(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.warn, fields, msg);
  }
  error(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.error, fields, msg);
  }
  fatal(fields: object, msg?: string): void {
    this.write(LOG_LEVELS.fatal, fields, msg);
  }

  /** Writes what the destination holds (the process's stop calls it before exiting). */
  flush(): void {
    this.destination.flush?.();
  }

  /** Whether a line at `level` would be written. */
  isLevelEnabled(level: LogLevelName): boolean {
    return LOG_LEVELS[level] >= this.threshold;
  }

  private write(level: number, given: object, msg: string | undefined): void {
    if (level < this.threshold) return;
    let fields: Fields;
    if (given instanceof Error) {
      fields = { err: given };
      msg ??= given.message;
    } else {
      fields = given as Fields;
      if (msg === undefined && fields["msg"] === undefined && fields["err"] instanceof Error) msg = fields["err"].message;
    }
    if (this.options.mixin) fields = { ...this.options.mixin(), ...fields };
    if (this.options.format) fields = this.options.format(fields);
    const line: Fields = { level, time: Date.now(), ...this.options.base };
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      if (value === undefined || typeof value === "function") continue;
      line[key] = key === "err" ? serializedError(value) : value;
    }
    if (msg !== undefined) line["msg"] = msg;
    this.destination.write(`${stringified(line)}\n`);
  }
}

/** An error as a log field: its class, message and stack (with its causes'), and its own enumerable fields. */
export function serializedError(value: unknown, seen = new Set<unknown>()): unknown {
  if (!(value instanceof Error) || seen.has(value)) return value;
  seen.add(value);
  const serialized: Fields = { type: value.constructor.name || value.name, message: value.message, stack: value.stack };
  for (let cause = value.cause, depth = 0; cause instanceof Error && !seen.has(cause) && depth < 10; cause = cause.cause, depth++) {
    seen.add(cause);
    serialized["message"] = `${String(serialized["message"])}: ${cause.message}`;
    serialized["stack"] = `${String(serialized["stack"])}\ncaused by: ${cause.stack ?? cause.message}`;
  }
  if (value instanceof AggregateError) serialized["aggregateErrors"] = value.errors.map((inner) => serializedError(inner, seen));
  for (const key of Object.keys(value)) {
    if (key === "cause" || serialized[key] !== undefined) continue;
    const field = (value as unknown as Fields)[key];
    serialized[key] = field instanceof Error ? serializedError(field, seen) : field;
  }
  return serialized;
}

/** JSON text of a line; a circular reference or a bigint, which JSON.stringify refuses, is written as a string instead. */
function stringified(line: Fields): string {
  try {
    return JSON.stringify(line);
  } catch {
    const ancestors: unknown[] = [];
    return JSON.stringify(line, function (this: unknown, _key, value: unknown) {
      if (typeof value === "bigint") return value.toString();
      if (typeof value !== "object" || value === null) return value;
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(value)) return "[Circular]";
      ancestors.push(value);
      return value;
    });
  }
}
