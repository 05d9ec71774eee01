import type { TaskReadPort } from "../../runtime/task-read-port.js";
import type { FeatureContext } from "./feature-context.js";
import type { FeatureRegistry } from "./feature-registry.js";

/** What the feature methods reach, in either era: the registry, the store (for cursors), the page size. */
export interface FeatureHost {
  features: FeatureRegistry;
  store: Pick<TaskReadPort, "secret">;
  pageSize: number;
}

/** One feature method, era-neutral: its params in, its result out (each era adds its own envelope). */
export type FeatureMethod = (
  host: FeatureHost,
  params: Record<string, unknown> | undefined,
  ctx: FeatureContext,
) => Promise<Record<string, unknown>>;
