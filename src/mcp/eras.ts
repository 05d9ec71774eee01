import type { ServerEra, StatelessEra, TaskEra } from "./era.js";
import * as registered from "./era-registry.js";

/** Every era the registry names (`era-registry.ts`), in the order of their exported names. */
const ERAS: readonly Registered[] = Object.values(registered);

type Registered = (typeof registered)[keyof typeof registered];

/** The protocol revisions this server speaks, as the registry names them. */
export type EraId = Registered["id"];

/**
 * The era of sessions opened by `initialize` (stdio, HTTP sessions, an SDK `McpServer` given our
 * tasks, the gateway's upstream, a client hosting tasks). Its type is the registered session era's,
 * so without one every session front fails to compile where it needs it.
 */
export const SESSION_ERA: SessionEra = onlySessionEra(ERAS);

/** TaskEra while the registry names a session era, never when it names none. */
type SessionEra = [Extract<Registered, TaskEra>] extends [never] ? never : TaskEra;

/** The stateless eras, asked in order which one claims a POST before any session is looked up. */
export const STATELESS_ERAS: readonly StatelessEra[] = ERAS.filter(
  (era: ServerEra): era is Extract<Registered, StatelessEra> => era.kind === "stateless",
);

function onlySessionEra(eras: readonly ServerEra[]): SessionEra {
  const sessions = eras.filter((era) => era.kind === "session");
  if (sessions.length !== 1) throw new Error(`era-registry.ts names ${sessions.length} session eras; a server has exactly one`);
  return sessions[0] as SessionEra;
}
