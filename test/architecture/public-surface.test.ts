/**
 * The package's public surface, read from the entry files with TypeScript's checker (runtime and
 * type-only names alike): the root entry `mcp-tasks` holds what a server author writes against
 * and nothing a store, a lease or a cluster implements; each of those types is exported by the
 * entry it belongs to; and every export of every entry carries a TSDoc summary, which the API
 * reference shows.
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRIES = ["server", "client", "sqlite", "postgres", "http", "sdk", "testing", "demo"] as const;
type Entry = (typeof ENTRIES)[number];

/** The root entry's names: a new one is a decision about what every server author sees. */
const ROOT_NAMES = [
  "Annotations",
  "AskOptions",
  "Caller",
  "CapabilityError",
  "Completer",
  "CompletionAnswer",
  "CompletionContext",
  "DrainReport",
  "FailedLookupLimit",
  "FeatureContext",
  "GatherContext",
  "LogLevel",
  "Logger",
  "PromptArguments",
  "PromptDefinition",
  "PromptHandler",
  "PromptResult",
  "RateLimit",
  "RecoveryPolicy",
  "ResourceDefinition",
  "ResourcePart",
  "ResourceReadHandler",
  "ResourceReadResult",
  "ResourceTemplateDefinition",
  "RpcCode",
  "TaskBinding",
  "TaskError",
  "TaskErrorKind",
  "TaskServer",
  "TaskServerOptions",
  "TaskSupport",
  "TemplateReadHandler",
  "TemplateVariables",
  "ToolContext",
  "ToolDefinition",
  "ToolHandler",
  "TtlPolicy",
  "createTaskServer",
  "localEventBus",
  "memoryStore",
];

/**
 * The requestor entry's names (`mcp-tasks/client`), every one era-neutral: no era's own class or
 * descriptor (a 2025-11-25 `RemoteTask` or `TaskPeer`, a 2026-07-28 `StatelessConnection`), so
 * removing an era (npm run check:eras) changes nothing a user imports.
 */
const CLIENT_NAMES = [
  "CachedEra",
  "CallToolOptions",
  "ClientTaskHosting",
  "ConnectOptions",
  "ConnectionError",
  "ERA_CACHE_MS",
  "ElicitHandler",
  "EraCache",
  "EraFeatures",
  "HttpConnectionOptions",
  "InputRefusedError",
  "InputRequestInfo",
  "JournalEntry",
  "LifecycleEvent",
  "PROTOCOL_REVISIONS",
  "ProtocolRevision",
  "RemoteError",
  "RemoteTaskHandle",
  "RemoteTaskInfo",
  "RemoteTaskProgress",
  "RemoteTaskStatus",
  "RpcCode",
  "SampleHandler",
  "TaskCancelledError",
  "TaskClient",
  "TaskClientOptions",
  "TaskError",
  "TaskErrorKind",
  "TaskJournal",
  "TaskOutcome",
  "ToolCall",
  "ToolTask",
  "WebhookSignatureError",
  "fileJournal",
  "memoryEraCache",
  "memoryJournal",
  "verifyWebhook",
];

/** Names that would tie a user of `mcp-tasks/client` to one protocol era. */
const PER_ERA =
  /^(RemoteTask|RemoteTaskOptions|TaskPeer|PeerRequestOptions|StatelessConnection|StatelessConnectionOptions|StatelessRequestOptions|REQUESTOR_.*)$|20\d\d|rev\d/;

/** Where the types a store, a lease or a cluster implements are exported instead of the root. */
const IMPLEMENTER_TYPES: Readonly<Record<string, Entry>> = {
  TaskStore: "testing",
  ClusterStore: "testing",
  LeaseStore: "testing",
  ClusterView: "testing",
  LeaseInfo: "testing",
  WorkerBeat: "testing",
  WorkerInfo: "testing",
  Checkpoint: "testing",
  CheckpointStore: "testing",
  StreamEventStore: "testing",
  StoredStreamEvent: "testing",
  EventBus: "testing",
  TaskEvent: "testing",
  TaskRecord: "testing",
  NewTask: "testing",
  TaskStatus: "testing",
  WorkerPoolOptions: "postgres",
  LeaseReaperOptions: "postgres",
  EngineObserver: "http",
  LimitName: "http",
  StoreInUseError: "sqlite",
};

interface Exported {
  name: string;
  /** The TSDoc summary of the declaration the name stands for. */
  summary: string;
}

const exportsOf = new Map<Entry, Exported[]>();

beforeAll(() => {
  const files = ENTRIES.map((entry) => join(ROOT, "src/exports", `${entry}.ts`));
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error("tsconfig.json did not parse");
  const program = ts.createProgram(files, config.options);
  const checker = program.getTypeChecker();
  ENTRIES.forEach((entry, i) => {
    const source = program.getSourceFile(files[i] ?? "");
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no module for ${entry}`);
    exportsOf.set(
      entry,
      checker.getExportsOfModule(module).map((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return { name: symbol.name, summary: ts.displayPartsToString(target.getDocumentationComment(checker)).trim() };
      }),
    );
  });
}, 120_000);

const names = (entry: Entry): string[] => (exportsOf.get(entry) ?? []).map((e) => e.name).sort();

describe("the public surface", () => {
  it("the root entry holds at most 40 names: the server author's", () => {
    expect(names("server")).toEqual([...ROOT_NAMES].sort());
    expect(ROOT_NAMES.length).toBeLessThanOrEqual(40);
  });

  it("the requestor entry exports era-neutral names only", () => {
    expect(names("client")).toEqual([...CLIENT_NAMES].sort());
    expect(names("client").filter((name) => PER_ERA.test(name))).toEqual([]);
  });

  it("store, lease and cluster types are exported by their own entries, not by the root", () => {
    for (const [name, entry] of Object.entries(IMPLEMENTER_TYPES)) {
      expect(names("server"), name).not.toContain(name);
      expect(names(entry), `${name} from mcp-tasks/${entry}`).toContain(name);
    }
  });

  it("every export of every entry has a TSDoc summary", () => {
    const undocumented = ENTRIES.flatMap((entry) =>
      (exportsOf.get(entry) ?? []).filter((e) => e.summary === "").map((e) => `${entry}: ${e.name}`),
    );
    expect(undocumented).toEqual([]);
  });
});
