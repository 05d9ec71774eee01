import type { TaskEra } from "./era.js";
import { rev20251125 } from "./rev2025-11-25/era.js";

/**
 * The eras this server speaks. Sessions opened by `initialize` speak 2025-11-25; the tasks
 * extension of 2026-07-28 (stateless requests) joins here as its own folder.
 */
export const SESSION_ERA: TaskEra = rev20251125;
