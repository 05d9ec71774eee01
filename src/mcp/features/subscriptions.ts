/** Where a `notifications/resources/updated` goes: a connected session (the SDK server has the method). */
export interface UpdateSink {
  sendResourceUpdated(params: { uri: string }): Promise<void>;
}

/**
 * `resources/subscribe` state: which sessions asked about which URIs. Held in the process beside
 * the sessions it names; a session's subscriptions go when it closes.
 */
export class ResourceSubscriptions {
  private readonly byUri = new Map<string, Set<UpdateSink>>();
  private readonly bySink = new Map<UpdateSink, Set<string>>();
  private readonly watchers = new Set<(uri: string, watched: boolean) => void>();

  /**
   * Calls `listener` when a URI gains its first subscribed session (`watched` true) and when it
   * loses its last (false): for a server whose resources are someone else's (the gateway forwards
   * the subscription upstream). Returns what stops it.
   */
  onWatch(listener: (uri: string, watched: boolean) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  subscribe(sink: UpdateSink, uri: string): void {
    let sinks = this.byUri.get(uri);
    if (!sinks) {
      this.byUri.set(uri, (sinks = new Set()));
      for (const watcher of this.watchers) watcher(uri, true);
    }
    sinks.add(sink);
    let uris = this.bySink.get(sink);
    if (!uris) this.bySink.set(sink, (uris = new Set()));
    uris.add(uri);
  }

  /** Unsubscribing from a URI never subscribed to is no error (the end state is the one asked for). */
  unsubscribe(sink: UpdateSink, uri: string): void {
    const sinks = this.byUri.get(uri);
    sinks?.delete(sink);
    if (sinks?.size === 0) {
      this.byUri.delete(uri);
      for (const watcher of this.watchers) watcher(uri, false);
    }
    const uris = this.bySink.get(sink);
    uris?.delete(uri);
    if (uris?.size === 0) this.bySink.delete(sink);
  }

  /** Forgets every subscription of a session (it closed). */
  drop(sink: UpdateSink): void {
    for (const uri of this.bySink.get(sink) ?? []) this.unsubscribe(sink, uri);
  }

  /**
   * Sends `notifications/resources/updated` for `uri` to every session subscribed to it; a session
   * that cannot take it (its stream is gone) is skipped. Resolves once each has been tried.
   */
  async updated(uri: string): Promise<void> {
    const sinks = [...(this.byUri.get(uri) ?? [])];
    await Promise.all(sinks.map((sink) => sink.sendResourceUpdated({ uri }).catch(() => {})));
  }
}
