import type { ListKind } from "./feature-registry.js";

/** A connected session as far as list-changed announcements go (the SDK server is one). */
export interface ListChangedSink {
  notification(notification: { method: string }): Promise<void>;
}

const METHOD_OF: Readonly<Record<ListKind, string>> = {
  tools: "notifications/tools/list_changed",
  resources: "notifications/resources/list_changed",
  prompts: "notifications/prompts/list_changed",
};

/**
 * The connected sessions that declared `listChanged`, per list kind, when they began (the others
 * have no stream for it, or never heard of the kind): who hears that a list changed.
 */
export class ListChangedSessions {
  private readonly sessions = new Map<ListChangedSink, ReadonlySet<ListKind>>();

  /** A session began; `capabilities` are what it declared. */
  add(session: ListChangedSink, capabilities: Record<string, unknown>): void {
    const kinds = (Object.keys(METHOD_OF) as ListKind[]).filter(
      (kind) => (capabilities[kind] as { listChanged?: unknown } | undefined)?.listChanged === true,
    );
    if (kinds.length > 0) this.sessions.set(session, new Set(kinds));
  }

  /** The session closed. */
  delete(session: ListChangedSink): void {
    this.sessions.delete(session);
  }

  /**
   * Sends `notifications/<kind>/list_changed` to each session listening for that kind; one that
   * cannot take it (its stream is gone) is skipped. Resolves once each has been tried.
   */
  async announce(kind: ListKind): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [session, kinds] of this.sessions) {
      if (kinds.has(kind)) sends.push(session.notification({ method: METHOD_OF[kind] }).catch(() => {}));
    }
    await Promise.all(sends);
  }
}
