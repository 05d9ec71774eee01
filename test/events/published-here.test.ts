/**
 * `publishedHere`: a bus view that tells apart what this process publishes (its own writes) from
 * what reaches the bus otherwise (other nodes' events, delivered by the bus itself), so the
 * webhook sender acts at once on the former only.
 */
import { describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { publishedHere } from "../../src/events/published-here.js";
import type { TaskEvent } from "../../src/events/task-event.js";

const wake = (taskId: string): TaskEvent => ({ type: "wake", taskId });

describe("publishedHere", () => {
  it("tells its listeners of the view's publishes only; every listener of the bus hears both", () => {
    const inner = localEventBus();
    const { bus, onPublished } = publishedHere(inner);
    const own: string[] = [];
    const all: string[] = [];
    onPublished((event) => own.push(event.taskId));
    bus.onAny((event) => all.push(event.taskId));
    bus.publish(wake("mine"));
    // What another node sends reaches the inner bus, not the view's publish.
    inner.publish(wake("theirs"));
    expect(own).toEqual(["mine"]);
    expect(all).toEqual(["mine", "theirs"]);
  });

  it("keeps the bus's own members, publishHere included, and stops telling after unsubscribing", () => {
    const inner = localEventBus();
    const heard: string[] = [];
    inner.publishHere = (event) => inner.publish(event);
    const { bus, onPublished } = publishedHere(inner);
    const off = onPublished((event) => heard.push(event.taskId));
    bus.publishHere!(wake("after-write"));
    off();
    bus.publish(wake("later"));
    expect(heard).toEqual(["after-write"]);
    expect(typeof bus.onTask).toBe("function");
    expect(bus.hearOthers).toBeUndefined();
  });
});
