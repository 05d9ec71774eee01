import type { Viewer } from "./viewer.js";

/** Event streams the web view holds open at most, all viewers together. */
export const DEFAULT_MAX_EVENT_STREAMS = 500;
/** Event streams one principal holds open at most (each open page holds one). */
export const DEFAULT_MAX_EVENT_STREAMS_PER_VIEWER = 20;

/** Why a stream was not admitted: the server holds its maximum, or this principal holds its share. */
export interface StreamRefusal {
  name: "event_streams" | "event_streams_per_viewer";
  limit: number;
}

/**
 * The open event streams of the web view, counted per principal and in all: each holds a feed
 * subscription and up to 1 MiB of backlog, so neither one principal nor everyone together may
 * open them without bound. A closed stream gives its place back.
 */
export class EventStreamCaps {
  private readonly perViewer = new Map<string, number>();
  private open = 0;

  constructor(
    private readonly max: number,
    private readonly maxPerViewer: number,
  ) {
    for (const [name, value] of Object.entries({ maxEventStreams: max, maxEventStreamsPerViewer: maxPerViewer })) {
      if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive whole number, got ${value}`);
    }
  }

  /** Takes a place for a stream of `viewer`: the function that gives it back, or why there is none. */
  admit(viewer: Viewer): (() => void) | StreamRefusal {
    const key = viewer.principal;
    const held = this.perViewer.get(key) ?? 0;
    if (held >= this.maxPerViewer) return { name: "event_streams_per_viewer", limit: this.maxPerViewer };
    if (this.open >= this.max) return { name: "event_streams", limit: this.max };
    this.perViewer.set(key, held + 1);
    this.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open--;
      const left = (this.perViewer.get(key) ?? 1) - 1;
      if (left === 0) this.perViewer.delete(key);
      else this.perViewer.set(key, left);
    };
  }
}
