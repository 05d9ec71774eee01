import { readFileSync } from "node:fs";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { RECOVERY_POLICIES } from "../runtime/recovery-policy.js";
import type { RecoveryPolicy } from "../runtime/recovery-policy.js";
import type { TaskSupport } from "../mcp/tool-definition.js";
import { rootOf } from "./gateway-roots.js";

/** Re-sends after an upstream crash when a tool's recovery says "retry" and gives no `retries`. */
export const DEFAULT_CRASH_RETRIES = 2;
/** Most re-sends a config may ask for: a call that kills its upstream every time must end. */
export const MAX_CRASH_RETRIES = 5;

/** How the gateway offers one upstream tool. */
export interface GatewayToolConfig {
  /** `execution.taskSupport` listed for the tool; default "optional". */
  taskSupport: TaskSupport;
  /** ttl (ms) of a task of this tool when the requestor asks for none. */
  ttl?: number;
  /** What a task of this tool interrupted by a gateway restart does: "fail" (default), "retry", "resume". */
  recovery?: RecoveryPolicy;
  /** Text sent with the CreateTaskResult (`model-immediate-response`). */
  immediateResponse?: string;
  /** Longest the upstream may stay silent (no answer, no progress) on one call of this tool, in ms. */
  timeoutMs?: number;
  /** Re-sends of a call whose upstream died under it, when recovery is "retry" (see crash-retry.ts). */
  retries?: number;
  /** Tasks of this tool running at once, across callers (the tool's `concurrency`); more wait queued. */
  concurrency?: number;
  /**
   * A repeated identical keyless plain call of one caller, while the first runs, joins the first
   * one's task (the tool's `dedupe`); overrides the upstream's `annotations.idempotentHint` either way.
   */
  dedupe?: boolean;
}

const ToolEntry = z
  .object({
    taskSupport: z.enum(["forbidden", "optional", "required"]).optional(),
    ttl: z.number().int().positive().optional(),
    recovery: z.enum(RECOVERY_POLICIES as unknown as [RecoveryPolicy, ...RecoveryPolicy[]]).optional(),
    immediateResponse: z.string().optional(),
    timeoutMs: z.number().int().positive().optional(),
    retries: z.number().int().min(0).max(MAX_CRASH_RETRIES).optional(),
    concurrency: z.number().int().positive().optional(),
    dedupe: z.boolean().optional(),
  })
  .strict();

/** `upstreamPerPrincipal`: true, or the pool's bounds (either absent → its default). */
const PerPrincipalEntry = z.union([
  z.boolean(),
  z
    .object({
      maxUpstreams: z.number().int().positive().optional(),
      idleMs: z.number().int().positive().optional(),
    })
    .strict(),
]);

/**
 * The `--config FILE` JSON: `defaults` for every tool, `tools` per tool name (a name's entry
 * wins), `upstreamPerPrincipal` (one stdio upstream process per principal) and `roots`.
 */
export const GatewayConfigFile = z
  .object({
    defaults: ToolEntry.optional(),
    tools: z.record(z.string(), ToolEntry).optional(),
    upstreamPerPrincipal: PerPrincipalEntry.optional(),
    /** Roots the gateway answers the upstream's `roots/list` with when no requestor is asked: paths or `{uri, name}`. */
    roots: z.array(z.union([z.string().min(1), z.object({ uri: z.string().min(1), name: z.string().optional() }).strict()])).optional(),
  })
  .strict();

export type GatewayConfigFile = z.infer<typeof GatewayConfigFile>;

/** What the gateway knows about its tools' configuration. */
export class GatewayConfig {
  constructor(private readonly file: GatewayConfigFile = {}) {}

  /** The configured roots (`roots`), as the upstream is told them. */
  roots(): Root[] {
    return (this.file.roots ?? []).map((entry) => rootOf(entry));
  }

  /** What the file says of one process per principal: off (null), or the bounds it sets (possibly none). */
  perPrincipal(): { maxUpstreams?: number; idleMs?: number } | null {
    const entry = this.file.upstreamPerPrincipal;
    if (entry === undefined || entry === false) return null;
    return entry === true ? {} : entry;
  }

  /** The configuration of one upstream tool: its entry over `defaults` over taskSupport "optional". */
  tool(name: string): GatewayToolConfig {
    const merged = { ...this.file.defaults, ...this.file.tools?.[name] };
    return {
      taskSupport: merged.taskSupport ?? "optional",
      ...(merged.ttl !== undefined && { ttl: merged.ttl }),
      ...(merged.recovery !== undefined && { recovery: merged.recovery }),
      ...(merged.immediateResponse !== undefined && { immediateResponse: merged.immediateResponse }),
      ...(merged.timeoutMs !== undefined && { timeoutMs: merged.timeoutMs }),
      ...(merged.retries !== undefined && { retries: merged.retries }),
      ...(merged.concurrency !== undefined && { concurrency: merged.concurrency }),
      ...(merged.dedupe !== undefined && { dedupe: merged.dedupe }),
    };
  }

  /** Whether the tool's own entry (not `defaults`) sets `field`. */
  hasOwnEntry(name: string, field: keyof GatewayToolConfig): boolean {
    const entry = this.file.tools?.[name];
    return entry !== undefined && Object.hasOwn(entry, field);
  }
}

/** Reads and checks a config file; a malformed one throws an Error naming the file and what is wrong. */
export function loadGatewayConfig(file: string): GatewayConfig {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`gateway config ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const parsed = GatewayConfigFile.safeParse(json);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new Error(`gateway config ${file}: ${detail}`);
  }
  return new GatewayConfig(parsed.data);
}
