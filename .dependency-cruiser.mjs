// The layer table of the README, enforced on the import graph of src/ (`npm run lint`).
// Each layer may import only the layers before it; a tier of peers may not import one another.
// The order comes from what the code needs: metrics implements the engine's EngineObserver
// (so it sits above runtime and the engine never loads prom-client), and the binding wires
// metrics into a TaskServer; web, client, demo and testing (the store contract suites) are
// separate front ends above http (the gateway, which serves an upstream MCP server through a
// TaskServer, among them); cli and the package's entry points (src/exports/) assemble everything.
const TIERS = [
  ["core"],
  ["store"],
  ["events"],
  ["runtime"],
  ["metrics"],
  ["mcp"],
  ["http"],
  ["web", "client", "demo", "testing", "gateway"],
  ["cli", "exports"],
];

/** The path pattern of a list of layer folders under src/. */
const folders = (names) => `^src/(${names.join("|")})/`;

// store and events are one step each in the order, but neither needs the other: both import only core.
const ONLY_CORE = new Set(["store", "events"]);

const layerRules = TIERS.flatMap((tier, index) =>
  tier.map((layer) => {
    const allowed = ONLY_CORE.has(layer) ? ["core", layer] : [...TIERS.slice(0, index).flat(), layer];
    return {
      name: `layer-${layer}`,
      comment: `src/${layer}/ may import only ${allowed.filter((name) => name !== layer).join(", ") || "nothing of ours"} (the README's layer table)`,
      severity: "error",
      from: { path: folders([layer]) },
      to: { path: "^src/", pathNot: folders(allowed) },
    };
  }),
);

/** @type {import("dependency-cruiser").IConfiguration} */
export default {
  forbidden: [
    ...layerRules,
    {
      name: "no-barrel-inside",
      comment: "the package's entry points (src/exports/) are for users; code inside src/ imports the file that holds the name",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/exports/" },
      to: { path: "^src/exports/" },
    },
    {
      name: "era-isolation",
      comment: "one protocol era's folder must not import another's: a second era is one new folder, and deleting one deletes it",
      severity: "error",
      from: { path: "^src/mcp/(rev[^/]+)/" },
      to: { path: "^src/mcp/rev[^/]+/", pathNot: "^src/mcp/$1/" },
    },
    {
      name: "requestor-era-isolation",
      comment: "the requestor's era folders (src/client/rev…) follow the same rule",
      severity: "error",
      from: { path: "^src/client/(rev[^/]+)/" },
      to: { path: "^src/client/rev[^/]+/", pathNot: "^src/client/$1/" },
    },
    {
      name: "era-registry",
      comment:
        "outside the era folders only the two registries (src/mcp/era-registry.ts, src/client/requestor-era-registry.ts) import an era folder: everything else asks the era interfaces (src/mcp/era.ts, src/client/requestor-era.ts) and what the registries list (src/mcp/eras.ts, src/client/requestor-eras.ts), so removing an era is deleting its two folders and its line in each registry",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(mcp/(rev[^/]+/|era-registry\\.ts$)|client/(rev[^/]+/|requestor-era-registry\\.ts$))" },
      to: { path: "^src/(mcp|client)/rev[^/]+/" },
    },
    {
      name: "requestor-era-binding",
      comment: "a requestor era folder (src/client/rev…) may use its own era's binding in src/mcp, never another era's",
      severity: "error",
      from: { path: "^src/client/(rev[^/]+)/" },
      to: { path: "^src/mcp/rev[^/]+/", pathNot: "^src/mcp/$1/" },
    },
    {
      name: "no-sdk-below-mcp",
      comment: "core, store, events and runtime know nothing of the SDK (its types included)",
      severity: "error",
      from: { path: folders(["core", "store", "events", "runtime"]) },
      to: { path: "(^|/)node_modules/@modelcontextprotocol/|^@modelcontextprotocol/" },
    },
    {
      name: "no-circular",
      comment: "no import cycles, type-only ones included",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "no-tests-from-src",
      comment: "the package ships src/ without test/ and bench/",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
    {
      name: "no-unresolvable",
      comment: "an import that resolves to nothing would let a planted violation slip past the rules above",
      severity: "error",
      from: { path: "^src/" },
      // node:sqlite is a built-in of Node 22 and 24 that Node 20, which runs this check, does not know.
      to: { couldNotResolve: true, pathNot: "^node:sqlite$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // type-only imports count: a type import is still a dependency on that layer
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
    },
  },
};
