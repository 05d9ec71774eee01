/**
 * resources/subscribe and resources/unsubscribe per session, and app.resourceUpdated(uri), in
 * memory and over HTTP (the updates travel on the session's GET stream there). A session not
 * subscribed to a URI is shown to get nothing for it by ordering: an update it is subscribed to,
 * sent after, is the first notification it sees.
 */
import { describe, expect, it } from "vitest";
import { listen, useFeatures, VIAS } from "./features-fixture.js";

const UPDATED = "notifications/resources/updated";

describe.each(VIAS)("resource subscriptions (%s)", (via) => {
  const start = useFeatures(via);

  it("sends notifications/resources/updated to a session subscribed to the uri", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    await client.subscribeResource({ uri: "memo://readme" });
    await fixture.app.resourceUpdated("memo://readme");
    expect(await heard.next()).toEqual({ method: UPDATED, params: { uri: "memo://readme" } });
  });

  it("sends nothing to a session not subscribed to that uri", async () => {
    const fixture = await start();
    const subscriber = await fixture.connect();
    const other = await fixture.connect();
    const heardByOther = listen(other);
    await subscriber.subscribeResource({ uri: "memo://readme" });
    await other.subscribeResource({ uri: "memo://logo" });
    await fixture.app.resourceUpdated("memo://readme");
    await fixture.app.resourceUpdated("memo://logo");
    expect(await heardByOther.next()).toEqual({ method: UPDATED, params: { uri: "memo://logo" } });
  });

  it("stops sending updates of a uri after resources/unsubscribe", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    await client.subscribeResource({ uri: "memo://readme" });
    await client.subscribeResource({ uri: "memo://logo" });
    await client.unsubscribeResource({ uri: "memo://readme" });
    await fixture.app.resourceUpdated("memo://readme");
    await fixture.app.resourceUpdated("memo://logo");
    expect(await heard.next()).toEqual({ method: UPDATED, params: { uri: "memo://logo" } });
  });

  it("accepts a subscription to a uri a template matches", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    await client.subscribeResource({ uri: "users://ada/profile" });
    await fixture.app.resourceUpdated("users://ada/profile");
    expect(await heard.next()).toEqual({ method: UPDATED, params: { uri: "users://ada/profile" } });
  });

  it("refuses a subscription to a uri no resource answers to with -32002", async () => {
    const client = await (await start()).connect();
    await expect(client.subscribeResource({ uri: "memo://nothing" })).rejects.toMatchObject({
      code: -32002,
      data: { uri: "memo://nothing" },
    });
  });
});
