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
      comment:
        "an era's binding folder (src/mcp/rev…) uses its own era's wire (src/mcp/wire/rev…) and requestor (src/mcp/requestor/rev…: the server asking its client as a task), never another era's folders: a second era is new folders, and deleting one deletes it",
      severity: "error",
      from: { path: "^src/mcp/(rev[^/]+)/" },
      to: { path: "^src/mcp/(wire/|requestor/)?rev[^/]+/", pathNot: "^src/mcp/(wire/|requestor/)?$1/" },
    },
    {
      name: "requestor-era-isolation",
      comment:
        "an era's requestor folder (src/mcp/requestor/rev…) uses its own era's wire and nothing of any era's binding (src/mcp/rev…): the requestor sits beside the bindings, on the wire",
      severity: "error",
      from: { path: "^src/mcp/requestor/(rev[^/]+)/" },
      to: { path: "^src/mcp/(wire/|requestor/)?rev[^/]+/", pathNot: "^src/mcp/(wire/|requestor/)$1/" },
    },
    {
      name: "wire-isolation",
      comment: "an era's wire folder (src/mcp/wire/rev…) knows only its own era: no other era's wire, no binding, no requestor",
      severity: "error",
      from: { path: "^src/mcp/wire/(rev[^/]+)/" },
      to: { path: "^src/mcp/(wire/|requestor/)?rev[^/]+/", pathNot: "^src/mcp/wire/$1/" },
    },
    {
      name: "wire-below-bindings",
      comment:
        "the wire (src/mcp/wire/) sits below the bindings and the requestors: it imports none of the era seams, the bindings or the requestor (src/mcp/era.ts, eras.ts, the registries, src/mcp/requestor/, src/mcp/rev…)",
      severity: "error",
      from: { path: "^src/mcp/wire/" },
      to: { path: "^src/mcp/(era\\.ts$|eras\\.ts$|era-registry\\.ts$|requestor/|rev[^/]+/)" },
    },
    {
      name: "wire-is-pure",
      comment:
        "the wire's codecs do no I/O: besides core, events and the wire itself they import only types of the binding's vocabulary (params, log levels, task support, error codes) and the SEP-414 trace-context reader",
      severity: "error",
      from: { path: "^src/mcp/wire/" },
      to: {
        path: "^src/",
        pathNot: "^src/(core|events|mcp/wire)/|^src/mcp/tracing/trace-carrier\\.ts$",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "requestor-below-bindings",
      comment:
        "the requestor (src/mcp/requestor/: what TaskClient, the CLI and the gateway follow tasks with) uses the wire, never a server binding or its seam (src/mcp/era.ts, eras.ts, era-registry.ts, src/mcp/rev…)",
      severity: "error",
      from: { path: "^src/mcp/requestor/" },
      to: { path: "^src/mcp/(era\\.ts$|eras\\.ts$|era-registry\\.ts$|rev[^/]+/)" },
    },
    {
      name: "era-registry",
      comment:
        "outside the era folders only the two registries (src/mcp/era-registry.ts, src/mcp/requestor/requestor-era-registry.ts) import an era folder: everything else asks the era interfaces (src/mcp/era.ts, src/mcp/requestor/requestor-era.ts) and what the registries list (src/mcp/eras.ts, src/mcp/requestor/requestor-eras.ts), so removing an era is deleting its wire, binding and requestor folders and its line in each registry",
      severity: "error",
      from: {
        path: "^src/",
        pathNot: "^src/mcp/((wire/|requestor/)?rev[^/]+/|era-registry\\.ts$|requestor/requestor-era-registry\\.ts$)",
      },
      to: { path: "^src/mcp/(wire/|requestor/)?rev[^/]+/" },
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
