/**
 * The MCP Registry entry (server.json at the repository's root), checked against a copy of the
 * registry's schema 2025-12-11 kept beside this file (server.schema.2025-12-11.json: the
 * registry's `server.schema.json` of that version, unchanged), with ajv as a JSON Schema draft-07
 * validator. The registry refuses an entry whose versions, name or image label disagree with what
 * is published, so every one of them is pinned here to package.json and the Dockerfile.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string): string => readFileSync(`${ROOT}${path}`, "utf8");

interface Package {
  registryType: string;
  identifier: string;
  version?: string;
  transport: { type: string; url?: string };
}
interface ServerJson {
  $schema: string;
  name: string;
  version: string;
  packages: Package[];
}

const schema = JSON.parse(read("test/registry/server.schema.2025-12-11.json")) as { $id: string };
const server = JSON.parse(read("server.json")) as ServerJson;
const manifest = JSON.parse(read("package.json")) as { name: string; version: string; mcpName: string };

function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  // ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
  (addFormats as unknown as { default: (ajv: Ajv) => void }).default(ajv);
  return ajv.compile(schema);
}

describe("server.json, the MCP Registry entry", () => {
  it("is valid against the registry's schema 2025-12-11, which it names", () => {
    const validate = validator();
    expect(validate(server), JSON.stringify(validate.errors, null, 2)).toBe(true);
    expect(server.$schema).toBe(schema.$id);
    expect(schema.$id).toBe("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
  });

  it("the vendored schema is a working validator: it refuses an entry without a name or with a version range", () => {
    const validate = validator();
    const { name: _name, ...nameless } = server;
    expect(validate(nameless)).toBe(false);
    const [npm] = server.packages;
    expect(validate({ ...server, packages: [{ ...npm, version: "latest" }] })).toBe(false);
  });

  it("names the server as package.json's mcpName, which the registry checks on the npm package", () => {
    expect(server.name).toBe(manifest.mcpName);
  });

  it("names the npm package and the OCI image, each at package.json's version", () => {
    expect(server.version).toBe(manifest.version);
    const npm = server.packages.filter((p) => p.registryType === "npm");
    const oci = server.packages.filter((p) => p.registryType === "oci");
    expect(npm).toHaveLength(1);
    expect(oci).toHaveLength(1);
    expect(npm[0]).toMatchObject({ identifier: manifest.name, version: manifest.version });
    // An OCI package carries its version as the image tag.
    expect(oci[0]?.identifier.endsWith(`/${manifest.name}:${manifest.version}`)).toBe(true);
    for (const entry of server.packages) {
      if (entry.version !== undefined) expect(entry.version).toBe(manifest.version);
    }
  });

  it("the image's io.modelcontextprotocol.server.name label, which the registry checks on the OCI image, is the same name", () => {
    const label = /io\.modelcontextprotocol\.server\.name="([^"]+)"/.exec(read("Dockerfile"));
    expect(label?.[1]).toBe(server.name);
  });
});
