import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Root } from "@modelcontextprotocol/sdk/types.js";

/**
 * A `--root` flag or config `roots` entry as the Root the gateway answers `roots/list` with: a
 * URI as it is (named by its last path segment unless a name is given), a path as its absolute
 * `file://` URI. Nothing is checked on disk: the upstream decides what it makes of a root.
 */
export function rootOf(spec: string | { uri: string; name?: string | undefined }): Root {
  const raw = typeof spec === "string" ? spec : spec.uri;
  const uri = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : pathToFileURL(resolve(raw)).href;
  const given = typeof spec === "string" ? undefined : spec.name;
  const name = given ?? basename(new URL(uri).pathname.replace(/\/+$/, ""));
  return name === "" ? { uri } : { uri, name };
}
