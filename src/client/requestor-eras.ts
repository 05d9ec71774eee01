/**
 * The requestor's protocol eras, registered in one place: the only file outside the era folders
 * (`src/client/rev…/`, `src/mcp/rev…/`) that imports one. Everything else on the requestor side —
 * TaskClient, the receiver of client-hosted tasks, the CLI, the package entry — takes what it needs
 * of an era from here, and asks an era's {@link EraFeatures} instead of its revision string. Removing
 * an era is deleting its two folders and its lines below.
 */
import type { EraFeatures, ProtocolRevision } from "./requestor-era.js";
import { REV_2025_11_25_FEATURES } from "./rev2025-11-25/requestor.js";
import { REV_2026_07_28_FEATURES } from "./rev2026-07-28/requestor.js";

export { Rev20251125Requestor } from "./rev2025-11-25/requestor.js";
export { taskStatusNotification } from "./rev2025-11-25/status-notification.js";
export { RemoteTask, type RemoteTaskOptions } from "../mcp/rev2025-11-25/requestor/remote-task.js";
export type { TaskPeer, PeerRequestOptions } from "../mcp/rev2025-11-25/requestor/peer.js";
export { relatedTaskIdOf, toWireTask } from "../mcp/rev2025-11-25/wire.js";
export { TasksExtRequestor } from "./rev2026-07-28/requestor.js";
export { StatelessConnection, type StatelessConnectionOptions, type StatelessRequestOptions } from "./rev2026-07-28/stateless-connection.js";
export { discover } from "./rev2026-07-28/discover.js";

/** What each revision's requestor can do, by revision (the era of a target is decided before any connection exists). */
const FEATURES: Readonly<Record<ProtocolRevision, EraFeatures>> = {
  "2025-11-25": REV_2025_11_25_FEATURES,
  "2026-07-28": REV_2026_07_28_FEATURES,
};

export function featuresOf(revision: ProtocolRevision): EraFeatures {
  return FEATURES[revision];
}

/** The revision `server/discover` reaches a requestor in (the other speaks through `initialize` sessions). */
export const DISCOVERED_REVISION: ProtocolRevision = "2026-07-28";
/** The revision of a requestor that opens an `initialize` session (stdio, or a server that refuses discover). */
export const SESSION_REVISION: ProtocolRevision = "2025-11-25";
