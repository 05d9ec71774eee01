import { z } from "zod";
import type { TaskServer } from "../mcp/task-server.js";

/** A 1×1 transparent PNG, base64: the suite wants binary contents and an image, not a particular one. */
const PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const text = (value: string) => ({ type: "text" as const, text: value });

/**
 * The resources, resource templates, prompts and completions the official conformance suite's
 * (0.1.16) `resources-*`, `prompts-*` and `completion-complete` server scenarios read, written
 * against the public API only (the TaskServer methods; the demo layer may not import the barrels).
 */
export function registerConformanceFeatures(app: TaskServer): TaskServer {
  app.resource(
    { uri: "test://static-text", name: "static-text", description: "A static text resource.", mimeType: "text/plain" },
    () => "This is the content of the static text resource.",
  );
  app.resource(
    { uri: "test://static-binary", name: "static-binary", description: "A static binary resource (a PNG).", mimeType: "image/png" },
    () => ({ blob: PIXEL_PNG }),
  );
  app.resource(
    { uri: "test://watched-resource", name: "watched-resource", description: "A resource to subscribe to.", mimeType: "text/plain" },
    () => "Watched resource content.",
  );
  app.resourceTemplate(
    {
      uriTemplate: "test://template/{id}/data",
      name: "template-data",
      description: "Data for an id, substituted from the URI.",
      mimeType: "application/json",
      complete: { id: (value) => ["123", "456", "789"].filter((id) => id.startsWith(value)) },
    },
    (_uri, { id }) => JSON.stringify({ id: String(id), templateTest: true, data: `Data for ID: ${String(id)}` }),
  );

  app.prompt("test_simple_prompt", { description: "A simple prompt without arguments." }, () => ({
    messages: [{ role: "user", content: text("This is a simple prompt for testing.") }],
  }));
  app.prompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with two required arguments.",
      arguments: z.object({ arg1: z.string().describe("First test argument"), arg2: z.string().describe("Second test argument") }),
      complete: {
        arg1: (value) => ["paris", "park", "party", "test", "testValue1"].filter((word) => word.startsWith(value)),
        arg2: (value) => ["world", "testValue2"].filter((word) => word.startsWith(value)),
      },
    },
    ({ arg1, arg2 }) => ({ messages: [{ role: "user", content: text(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`) }] }),
  );
  app.prompt(
    "test_prompt_with_embedded_resource",
    {
      description: "A prompt that embeds a resource.",
      arguments: z.object({ resourceUri: z.string().describe("URI of the resource to embed") }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
          },
        },
        { role: "user", content: text("Please process the embedded resource above.") },
      ],
    }),
  );
  app.prompt("test_prompt_with_image", { description: "A prompt with an image." }, () => ({
    messages: [
      { role: "user", content: { type: "image", data: PIXEL_PNG, mimeType: "image/png" } },
      { role: "user", content: text("Please analyze the image above.") },
    ],
  }));
  return app;
}
