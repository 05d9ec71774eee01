/**
 * The requestor's protocol eras, read from their registry (`requestor-era-registry.ts`, one line
 * per era). Everything on the requestor side — TaskClient, the CLI, the package entry — takes what
 * it needs of an era from here, and asks an era's {@link EraFeatures} instead of its revision
 * string, so the list below is all that changes when an era comes or goes.
 */
import type { EraFeatures, RequestorEraDescriptor, SessionRequestorDescriptor, StatelessRequestorDescriptor } from "./requestor-era.js";
import * as registered from "./requestor-era-registry.js";

export * from "./requestor-era-registry.js";

type Registered = Extract<(typeof registered)[keyof typeof registered], RequestorEraDescriptor>;

/** Every registered requestor era, in the order of their exported names. */
export const REQUESTOR_ERAS: readonly Registered[] = Object.values(registered).filter(isDescriptor);

/** The protocol revisions a TaskClient speaks (docs/protocol-eras.md). */
export type ProtocolRevision = Registered["revision"];
/** Every protocol revision a TaskClient speaks, one per registered requestor era. */
export const PROTOCOL_REVISIONS: readonly ProtocolRevision[] = REQUESTOR_ERAS.map((era) => era.revision);

/** SessionRequestorDescriptor while the registry names a session era, never when it names none. */
type SessionEra = [Extract<Registered, SessionRequestorDescriptor>] extends [never]
  ? never
  : SessionRequestorDescriptor & { revision: ProtocolRevision };

/** The era of a requestor that opens an `initialize` session (an SDK `Client`: stdio, or a server that speaks no stateless era). */
export const SESSION_REQUESTOR: SessionEra = onlySessionEra();

/** The revision of {@link SESSION_REQUESTOR}. */
export const SESSION_REVISION: ProtocolRevision = SESSION_REQUESTOR.revision;

/** The eras whose requests stand alone, asked in order whether a server speaks them before a session is opened. */
export const STATELESS_REQUESTORS: readonly StatelessRequestor[] = REQUESTOR_ERAS.filter(
  (era: RequestorEraDescriptor): era is Extract<Registered, StatelessRequestorDescriptor> => era.kind === "stateless",
);

/** A connection of a stateless era (what `new TaskClient(…)` takes besides an SDK `Client`). */
export type StatelessEraConnection = ReturnType<Extract<Registered, { kind: "stateless" }>["connect"]>;

/** A registered stateless era, its connections typed as any registered stateless era's. */
export type StatelessRequestor = StatelessRequestorDescriptor<StatelessEraConnection> & { revision: ProtocolRevision };

/** What each revision's requestor can do (the era of a target is decided before any connection exists). */
export function featuresOf(revision: ProtocolRevision): EraFeatures {
  const era = REQUESTOR_ERAS.find((candidate) => candidate.revision === revision);
  if (!era) throw new Error(`No requestor era speaks ${revision}`);
  return era.features;
}

/** The stateless era whose connection this is, or undefined for an SDK `Client`. */
export function statelessEraOf(connection: unknown): StatelessRequestor | undefined {
  return STATELESS_REQUESTORS.find((era) => era.owns(connection));
}

function isDescriptor(value: unknown): value is Registered {
  return typeof value === "object" && value !== null && "kind" in value && "revision" in value && "features" in value;
}

function onlySessionEra(): SessionEra {
  const sessions = REQUESTOR_ERAS.filter((era: RequestorEraDescriptor) => era.kind === "session");
  if (sessions.length !== 1)
    throw new Error(`requestor-era-registry.ts names ${sessions.length} session eras; a requestor has exactly one`);
  return sessions[0] as SessionEra;
}
