import { z } from "zod";
import type { TaskServer } from "../mcp/task-server.js";
import { pause } from "../core/pause.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/** A 1×1 red PNG (RGBA ff0000ff). */
const RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** A WAV file of `samples` samples of 8 kHz, 8-bit mono silence: the RIFF header and the data. */
function silentWav(samples: number): string {
  const wav = Buffer.alloc(44 + samples, 0x80); // 0x80 is silence for unsigned 8-bit PCM
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + samples, 4);
  wav.write("WAVE", 8, "ascii");
  wav.write("fmt ", 12, "ascii");
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(samples, 40);
  return wav.toString("base64");
}

/**
 * The `json-schema-2020-12` scenarios' input schema (0.1.16: `$schema`, `$defs`,
 * `additionalProperties: false`; 0.2.0-alpha.12 adds SEP-2106's `$anchor`, `allOf`/`anyOf` and
 * `if`/`then`/`else`). zod writes a schema with an `id` into `$defs` behind a `$ref`, a strict
 * object as `additionalProperties: false`, and copies other metadata keys as they are; the
 * refinements enforce what those keys say. Built on first use, then kept: the id "address" goes
 * into zod's global registry, where an id may be registered only once (so importing
 * `mcp-tasks/demo` claims no id).
 */
let jsonSchema2020Input: ReturnType<typeof buildJsonSchema2020Input> | undefined;

function buildJsonSchema2020Input() {
  return z
    .object({
      name: z.string().optional(),
      address: z
        .object({ street: z.string().optional(), city: z.string().optional() })
        .meta({ id: "address", $anchor: "addressDef" })
        .optional(),
      contactMethod: z.enum(["phone", "email"]).optional(),
      phone: z.string().optional(),
      email: z.string().optional(),
    })
    .strict()
    .refine((v) => v.phone !== undefined || v.email !== undefined, { message: "phone or email is required" })
    .refine((v) => (v.contactMethod === "phone" ? v.phone !== undefined : v.email !== undefined), {
      message: "the contact method's field is required",
    })
    .meta({
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      then: { required: ["phone"] },
      else: { required: ["email"] },
    });
}

/**
 * The fixture tools (`test_*`, `json_schema_2020_12_tool`) the tool scenarios of the official
 * conformance suite 0.1.16 call (and 0.2.0-alpha.12 under `--spec-version 2025-11-25`), written
 * against the public API only. Each does exactly what its scenario's description asks.
 */
export function registerLegacyConformanceTools(app: TaskServer): TaskServer {
  const none = z.object({});

  app.tool("test_simple_text", { description: "Returns one text block.", input: none, annotations: { readOnlyHint: true } }, async () =>
    text("This is a simple text response for testing."),
  );

  app.tool("test_image_content", { description: "Returns a 1x1 red PNG image.", input: none }, async () => ({
    content: [{ type: "image" as const, data: RED_PIXEL_PNG, mimeType: "image/png" }],
  }));

  app.tool("test_audio_content", { description: "Returns a short WAV of silence.", input: none }, async () => ({
    content: [{ type: "audio" as const, data: silentWav(80), mimeType: "audio/wav" }],
  }));

  app.tool("test_embedded_resource", { description: "Returns an embedded text resource.", input: none }, async () => ({
    content: [
      {
        type: "resource" as const,
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }));

  app.tool("test_multiple_content_types", { description: "Returns text, an image and an embedded resource.", input: none }, async () => ({
    content: [
      { type: "text" as const, text: "Multiple content types test:" },
      { type: "image" as const, data: RED_PIXEL_PNG, mimeType: "image/png" },
      {
        type: "resource" as const,
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }));

  app.tool(
    "test_tool_with_logging",
    { description: "Logs three info messages about 50 ms apart while it runs.", input: none },
    async (_args, ctx) => {
      ctx.log("info", "Tool execution started");
      await pause(50, ctx.signal);
      ctx.log("info", "Tool processing data");
      await pause(50, ctx.signal);
      ctx.log("info", "Tool execution completed");
      return text("Logging test completed: three messages sent.");
    },
  );

  app.tool("test_error_handling", { description: "Always reports an error (isError).", input: none }, async () => ({
    ...text("This tool intentionally returns an error for testing"),
    isError: true,
  }));

  app.tool(
    "test_tool_with_progress",
    { description: "Reports progress 0, 50 and 100 of 100, about 50 ms apart.", input: none },
    async (_args, ctx) => {
      ctx.progress(0, 100);
      await pause(50, ctx.signal);
      ctx.progress(50, 100);
      await pause(50, ctx.signal);
      ctx.progress(100, 100);
      return text("Progress test completed.");
    },
  );

  app.tool(
    "test_sampling",
    { description: "Asks the client's LLM (sampling/createMessage) to answer `prompt`.", input: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const answer = await ctx.sample({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 });
      const reply = answer.content.type === "text" ? answer.content.text : JSON.stringify(answer.content);
      return text(`LLM response: ${reply}`);
    },
  );

  app.tool(
    "test_elicitation",
    {
      description: "Asks the user (elicitation/create) for a username and an email, showing `message`.",
      input: z.object({ message: z.string() }),
    },
    async ({ message }, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message,
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      });
      return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  );

  app.tool(
    "test_elicitation_sep1034_defaults",
    { description: "Asks with a default for every primitive type (SEP-1034).", input: none },
    async (_args, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: "Please review your details (every field has a default)",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
            verified: { type: "boolean", description: "Verification status", default: true },
          },
        },
      });
      return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  );

  app.tool(
    "test_elicitation_sep1330_enums",
    { description: "Asks with each of the five enum schema forms (SEP-1330).", input: none },
    async (_args, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: "Please pick from each list",
        requestedSchema: {
          type: "object",
          properties: {
            untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
            titledSingle: {
              type: "string",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" },
              ],
            },
            legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
            untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
            titledMulti: {
              type: "array",
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" },
                ],
              },
            },
          },
        },
      });
      return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
    },
  );

  app.tool(
    "json_schema_2020_12_tool",
    { description: "Tool with JSON Schema 2020-12 features", input: (jsonSchema2020Input ??= buildJsonSchema2020Input()) },
    async ({ name }) => text(`Hello, ${name ?? "stranger"}`),
  );

  return app;
}
