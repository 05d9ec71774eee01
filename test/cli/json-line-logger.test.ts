/**
 * The CLI's log lines (src/cli/json-line-logger.ts): pino's line shape, which log shippers and
 * pino-pretty read — numeric level, time, the base fields, the line's fields, msg last — the
 * level threshold, errors with their causes, and lines that JSON.stringify alone would refuse.
 */
import { describe, expect, it } from "vitest";
import { JsonLineLogger, type JsonLineLoggerOptions } from "../../src/cli/json-line-logger.js";

function logged(options: Partial<JsonLineLoggerOptions> = {}): {
  logger: JsonLineLogger;
  texts: string[];
  lines: () => Record<string, unknown>[];
} {
  const texts: string[] = [];
  const logger = new JsonLineLogger({ level: "info", base: { service: "s" }, ...options }, { write: (text) => void texts.push(text) });
  return { logger, texts, lines: () => texts.map((text) => JSON.parse(text) as Record<string, unknown>) };
}

describe("JsonLineLogger", () => {
  it("writes one JSON line per call: level, time, base fields, mixin and call fields, msg last", () => {
    const { logger, texts, lines } = logged({ mixin: () => ({ trace_id: "t", audit: "from-mixin" }) });
    const before = Date.now();
    logger.info({ audit: "created", taskId: "a", skipped: undefined }, "task created");
    expect(texts).toHaveLength(1);
    expect(texts[0]?.endsWith("}\n")).toBe(true);
    const [line] = lines();
    expect(Object.keys(line ?? {})).toEqual(["level", "time", "service", "trace_id", "audit", "taskId", "msg"]);
    expect(line).toMatchObject({ level: 30, service: "s", trace_id: "t", audit: "created", taskId: "a", msg: "task created" });
    expect(line?.["time"]).toBeGreaterThanOrEqual(before);
  });

  it("writes nothing below its level, and nothing at all when silent", () => {
    const info = logged();
    info.logger.debug({ a: 1 }, "hidden");
    info.logger.trace({ a: 1 }, "hidden");
    info.logger.warn({ a: 1 }, "shown");
    expect(info.lines().map((line) => line["level"])).toEqual([40]);
    const silent = logged({ level: "silent" });
    silent.logger.fatal({ a: 1 }, "hidden");
    expect(silent.texts).toEqual([]);
  });

  it("refuses a level it does not know", () => {
    expect(() => logged({ level: "loud" })).toThrow(/unknown log level "loud"/);
  });

  it("applies the format to the fields (the credential censor) before writing", () => {
    const { logger, lines } = logged({ format: (fields) => ({ ...fields, token: "[redacted]" }) });
    logger.info({ token: "secret" }, "m");
    expect(lines()[0]?.["token"]).toBe("[redacted]");
  });

  it("writes an err field, or an Error given as the fields, with its type, message, stack and cause", () => {
    const { logger, lines } = logged();
    const cause = new Error("socket closed");
    const error = Object.assign(new TypeError("store failed", { cause }), { code: "E_STORE" });
    logger.error({ err: error }, "upkeep failed");
    logger.error(error);
    const [first, second] = lines();
    expect(first?.["msg"]).toBe("upkeep failed");
    expect(first?.["err"]).toMatchObject({ type: "TypeError", message: "store failed: socket closed", code: "E_STORE" });
    expect(String((first?.["err"] as { stack: string }).stack)).toContain("caused by: Error: socket closed");
    expect(second).toMatchObject({ msg: "store failed", err: { type: "TypeError" } });
  });

  it("writes a line with a circular reference or a bigint instead of throwing", () => {
    const { logger, lines } = logged();
    const looped: Record<string, unknown> = { name: "loop" };
    looped["self"] = looped;
    logger.info({ looped, big: 10n, shared: [{ x: 1 }, { x: 1 }] }, "odd values");
    expect(lines()[0]).toMatchObject({ looped: { name: "loop", self: "[Circular]" }, big: "10", shared: [{ x: 1 }, { x: 1 }] });
  });
});
