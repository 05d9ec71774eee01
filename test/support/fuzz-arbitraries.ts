/**
 * fast-check generators of malformed JSON-RPC traffic for the fuzz suite (test/security/fuzz*):
 * params of every tasks/* method and of task-augmented tools/call, and whole envelopes and bodies.
 * Values are plain JSON values, except where JSON.stringify cannot say it: {@link raw} splices
 * text in as is (1e400, -0, nesting deeper than any serializer recurses).
 */
import fc from "fast-check";

const RAW = "\u0001raw:";
const RAW_END = "\u0001";

/** A value serialized by {@link toJsonText} as `text`, unquoted. */
export function raw(text: string): string {
  return `${RAW}${text}${RAW_END}`;
}

/** The JSON text of a generated value, with {@link raw} pieces spliced in. */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.includes("\\u0001raw:")
    ? text.replace(/"\\u0001raw:((?:[^"\\]|\\.)*?)\\u0001"/g, (_, inner: string) => JSON.parse(`"${inner}"`) as string)
    : text;
}

/** An object whose own keys include `key` — JSON.parse makes `__proto__` an own key, as a server's parser does. */
function withKey(key: string, value: unknown, rest: Record<string, unknown> = {}): Record<string, unknown> {
  // Raw pieces stay placeholders (spliced in only by toJsonText): parsed here, a deep one would overflow.
  const base = JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value) ?? "null"}}`) as Record<string, unknown>;
  return Object.assign(base, rest);
}

/** Keys that would pollute or shadow prototypes if a server copied them carelessly. */
export const POLLUTING_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "__defineGetter__",
] as const;

/** Nested arrays `depth` deep, as raw text (no serializer could produce the deep ones). */
export const deep = (depth: number): string => raw(`${"[".repeat(depth)}${"]".repeat(depth)}`);

const oddStrings = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfff",
  "\ufeff",
  "\u202e",
  "null",
  "undefined",
  "NaN",
  "[object Object]",
  "' OR 1=1 --",
  "%00",
  "../../etc/passwd",
  "${jndi:x}",
  "<script>",
  "🙂",
);

const oddNumbers = fc.oneof(
  fc.constantFrom(0, -1, 1, 0.5, -0.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE, 1e21),
  fc.constantFrom(raw("1e400"), raw("-1e400"), raw("-0"), raw("1E2"), raw("0.0000001"), raw("123456789012345678901234567890")),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Mostly long, now and then over the 1 MiB arguments limit (each of those costs a megabyte on the wire). */
const hugeStrings = fc
  .oneof({ weight: 6, arbitrary: fc.constantFrom(1_000, 70_000) }, { weight: 1, arbitrary: fc.constant(1_100_000) })
  .map((n) => "x".repeat(n));

/** Strings anyone might send: short printable and full-Unicode ones, odd ones, huge ones. */
export const anyString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 3, arbitrary: oddStrings },
  { weight: 1, arbitrary: hugeStrings },
);

/** Any JSON value, odd numbers and strings included, shallow or deep, with polluting keys. */
export const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 3, arbitrary: fc.constantFrom(null, true, false) },
    { weight: 3, arbitrary: oddNumbers },
    { weight: 4, arbitrary: anyString },
    { weight: 2, arbitrary: fc.array(tie("value"), { maxLength: 4 }) },
    {
      weight: 2,
      arbitrary: fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...POLLUTING_KEYS)), tie("value"), { maxKeys: 4 }),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...POLLUTING_KEYS), tie("value")).map(([k, v]) => withKey(k, v)) },
    { weight: 1, arbitrary: fc.constantFrom(2, 50, 5_000, 50_000).map(deep) },
  ),
})).value;

/** Something in the place of a task id: real ids (own and foreign), near misses, or anything at all. */
export function taskIdValue(realIds: readonly string[]): fc.Arbitrary<unknown> {
  const real = fc.constantFrom(...realIds);
  return fc.oneof(
    { weight: 2, arbitrary: real },
    { weight: 2, arbitrary: fc.uuid() },
    {
      weight: 3,
      arbitrary: fc.tuple(real, fc.nat(35), fc.constantFrom("upper", "flip", "pad", "cut", "nul", "wrap")).map(([id, at, how]) => {
        if (how === "upper") return id.toUpperCase();
        if (how === "flip") return id.slice(0, at) + (id[at] === "0" ? "1" : "0") + id.slice(at + 1);
        if (how === "pad") return ` ${id}\t`;
        if (how === "cut") return id.slice(0, at);
        if (how === "nul") return `${id}\u0000`;
        return [id];
      }),
    },
    { weight: 1, arbitrary: real.map((id) => ({ taskId: id })) },
    { weight: 1, arbitrary: fc.constantFrom(257, 100_000).map((n) => "a".repeat(n)) },
    { weight: 4, arbitrary: anyValue },
  );
}

/** Params of tasks/get, tasks/result or tasks/cancel: a task id in any shape, and whatever else. */
export function lookupParams(realIds: readonly string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ taskId: taskIdValue(realIds), _meta: anyValue, extra: anyValue }, { requiredKeys: ["taskId"] }) },
    {
      weight: 1,
      arbitrary: fc.record({ taskId: taskIdValue(realIds), related: fc.constantFrom(...realIds) }).map(({ taskId, related }) => ({
        taskId,
        _meta: { "io.modelcontextprotocol/related-task": { taskId: related } },
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...POLLUTING_KEYS), taskIdValue(realIds)).map(([k, id]) => withKey(k, { taskId: id })),
    },
    { weight: 2, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

/** Params of tasks/list: cursors that are garbage, forged, tampered, foreign, or not strings. */
export function listParams(realCursors: readonly string[]): fc.Arbitrary<unknown> {
  const cursor = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...realCursors) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...realCursors), fc.nat(200), fc.string({ minLength: 1, maxLength: 3 }))
        .map(([c, at, s]) => c.slice(0, at % c.length) + s + c.slice((at % c.length) + 1)),
    },
    { weight: 2, arbitrary: fc.base64String({ maxLength: 80 }).map((b) => `${b}.${b}`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer(), fc.string())
        .map(([at, id]) => `${Buffer.from(JSON.stringify([at, id])).toString("base64url")}.AAAA`),
    },
    { weight: 4, arbitrary: anyValue },
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ cursor, _meta: anyValue }, { requiredKeys: ["cursor"] }) },
    { weight: 2, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

/** Params of a task-augmented tools/call: tool names, arguments and `task` of every wrong kind. */
export function toolCallParams(toolNames: readonly string[]): fc.Arbitrary<unknown> {
  const name = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...toolNames) }, { weight: 2, arbitrary: anyValue });
  const args = fc.oneof(
    { weight: 3, arbitrary: anyValue },
    {
      weight: 3,
      arbitrary: fc.record(
        { ms: oddNumbers, steps: anyValue, text: anyValue, question: anyValue, message: anyValue, code: oddNumbers },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(2, 101, 20_000).map((depth) => ({ ms: 1, nested: deep(depth) })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...POLLUTING_KEYS), anyValue).map(([k, v]) => withKey(k, v, { ms: 1 })) },
  );
  const task = fc.oneof(
    { weight: 3, arbitrary: fc.record({ ttl: fc.oneof(oddNumbers, anyValue) }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...POLLUTING_KEYS), oddNumbers).map(([k, v]) => withKey(k, { ttl: v })) },
    { weight: 2, arbitrary: anyValue },
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        { name, arguments: args, task, _meta: fc.oneof(anyValue, fc.record({ progressToken: anyValue })) },
        { requiredKeys: ["task"] },
      ),
    },
    { weight: 1, arbitrary: anyValue },
  );
}

/** A JSON-RPC request id: valid ones (string, integer) and every invalid kind. */
export const anyRequestId = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1.5, -0.25, true, {}, [], [1], "", raw("1e400")) },
);
