import type { SessionRequestorDescriptor } from "../requestor-era.js";
import { Rev20251125Requestor, REV_2025_11_25_FEATURES } from "./requestor.js";
import { upstreamTasks2025 } from "./upstream-tasks.js";

/**
 * The 2025-11-25 requestor, as the registry (`requestor-era-registry.ts`) lists it: TaskClient's
 * wire on an SDK `Client`, and the gateway's follow of its upstream's tasks.
 * @internal
 */
export const REQUESTOR_2025_11_25 = {
  kind: "session",
  revision: "2025-11-25" as const,
  features: REV_2025_11_25_FEATURES,
  upstream: upstreamTasks2025,
  requestor(client, serverCapabilities) {
    // A requestor that follows its tasks itself says so at initialize (the one task declaration of
    // this era, whatever it holds): the server then serves it tasks, not the fallback for hosts
    // without tasks. Merged with what the client declared already (client-hosted tasks).
    client.registerCapabilities({ tasks: {} });
    return new Rev20251125Requestor(client, serverCapabilities);
  },
} satisfies SessionRequestorDescriptor;
