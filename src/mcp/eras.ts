import type { StatelessEra, TaskEra } from "./era.js";
import { rev20251125 } from "./rev2025-11-25/era.js";
import { tasksExt } from "./rev2026-07-28/era.js";

/**
 * The eras this server speaks. Sessions opened by `initialize` speak 2025-11-25; stateless
 * requests (no session, an envelope per request) speak 2026-07-28 with the tasks extension.
 */
export const SESSION_ERA: TaskEra = rev20251125;

/** The stateless eras, asked in order which one claims a POST before any session is looked up. */
export const STATELESS_ERAS: readonly StatelessEra[] = [tasksExt];
