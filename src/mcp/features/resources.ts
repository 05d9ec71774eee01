import type { BlobResourceContents, Resource, TextResourceContents } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../../core/errors.js";
import type { FeatureContext } from "./feature-context.js";

/**
 * MCP `Annotations` (audience, priority, lastModified), declared here rather than imported: the
 * SDK releases the peer range starts at (1.24) neither export the type nor put it on `Resource`.
 */
export interface Annotations {
  audience?: Array<"user" | "assistant">;
  /** 0 (least important) to 1 (most). */
  priority?: number;
  /** ISO 8601. */
  lastModified?: string;
}

/** Declares a static resource: one fixed URI, as `resources/list` shows it. */
export interface ResourceDefinition {
  /** The resource's URI, unique on this server. */
  uri: string;
  /** A programmatic name. */
  name: string;
  /** A human-readable name for display. */
  title?: string;
  description?: string;
  /** The MIME type of its contents; the default of each part `read` returns. */
  mimeType?: string;
  /** Size in bytes of the raw contents, when known. */
  size?: number;
  /** Audience, priority, lastModified (MCP `Annotations`). */
  annotations?: Annotations;
}

/**
 * One part of a resource's contents: text, or binary (`blob`: bytes, or a base64 string).
 * `uri` defaults to the URI read and `mimeType` to the resource's.
 */
export type ResourcePart =
  { text: string; uri?: string; mimeType?: string } | { blob: Uint8Array | string; uri?: string; mimeType?: string };

/** What a read handler returns: a text (a string), one part, or several. */
export type ResourceReadResult = string | ResourcePart | ResourcePart[];

/** Reads a static resource (`resources/read`); `uri` is the URI asked for. */
export type ResourceReadHandler = (uri: string, ctx: FeatureContext) => ResourceReadResult | Promise<ResourceReadResult>;

export interface RegisteredResource {
  definition: ResourceDefinition;
  read: ResourceReadHandler;
}

/** The MCP spec's code for a URI no resource answers to, with the URI in `data`. */
export function resourceNotFound(uri: string): TaskError {
  return TaskError.protocol(RpcCode.ResourceNotFound, "Resource not found", { uri });
}

/** The fields `resources/list` shows of a resource. */
type ListedResource = Pick<ResourceDefinition, "uri" | "name" | "title" | "description" | "mimeType" | "size" | "annotations">;

/**
 * A resource as `resources/list` shows it: only the fields that were given. The gateway reads an
 * upstream's listing back into a definition with it too, since both directions carry the same fields.
 */
export function describeResource(definition: ListedResource): Resource {
  const { uri, name, title, description, mimeType, size, annotations } = definition;
  return {
    uri,
    name,
    ...(title !== undefined && { title }),
    ...(description !== undefined && { description }),
    ...(mimeType !== undefined && { mimeType }),
    ...(size !== undefined && { size }),
    ...(annotations !== undefined && { annotations }),
  };
}

/** A handler's answer as the `contents` of a ReadResourceResult. */
export function contentsOf(
  result: ResourceReadResult,
  uri: string,
  mimeType: string | undefined,
): Array<TextResourceContents | BlobResourceContents> {
  const parts = typeof result === "string" ? [{ text: result }] : Array.isArray(result) ? result : [result];
  return parts.map((part) => {
    const type = part.mimeType ?? mimeType;
    const head = { uri: part.uri ?? uri, ...(type !== undefined && { mimeType: type }) };
    if ("text" in part) return { ...head, text: part.text };
    return { ...head, blob: typeof part.blob === "string" ? part.blob : Buffer.from(part.blob).toString("base64") };
  });
}
