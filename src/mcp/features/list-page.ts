import { CursorCodec } from "../../core/cursor.js";
import type { TaskReadPort } from "../../runtime/task-read-port.js";

/** One page of a listing, and the cursor of the next when there is one. */
export interface ListPage<T> {
  items: T[];
  nextCursor?: string;
}

const codecs = new WeakMap<Pick<TaskReadPort, "secret">, Promise<CursorCodec>>();

/**
 * The cursor codec of a store: keyed with the store's secret, so every node of a cluster reads
 * the cursors any other node issued (one per store, made once).
 */
function codecOf(store: Pick<TaskReadPort, "secret">): Promise<CursorCodec> {
  let codec = codecs.get(store);
  if (!codec) {
    codec = store.secret().then((secret) => new CursorCodec(secret));
    codecs.set(store, codec);
  }
  return codec;
}

/**
 * A page of `items` (resources, templates, prompts) in their listing order after `cursor`.
 * The cursor is opaque and tamper-evident (the tasks/list codec, T-LIST-3): it holds the key of
 * the page's last item and its index. The next page starts after that key, or at the index when
 * the item was removed meanwhile (the list changed; a client that cares re-lists on
 * `list_changed`). `listing` keys the MAC, so a cursor of one listing (or of tasks/list) is not
 * one of another's; a cursor this server did not issue for it is -32602 (bad_cursor).
 */
export async function listPage<T>(
  store: Pick<TaskReadPort, "secret">,
  listing: string,
  items: readonly T[],
  keyOf: (item: T) => string,
  cursor: unknown,
  pageSize: number,
): Promise<ListPage<T>> {
  const codec = await codecOf(store);
  let start = 0;
  if (cursor !== undefined) {
    const position = codec.decode(cursor, `list:${listing}`);
    const after = items.findIndex((item) => keyOf(item) === position.id);
    start = after >= 0 ? after + 1 : Math.min(position.createdAt + 1, items.length);
  }
  const size = Math.max(1, pageSize);
  const page = items.slice(start, start + size);
  const last = page.at(-1);
  const end = start + page.length;
  if (last === undefined || end >= items.length) return { items: page };
  return { items: page, nextCursor: codec.encode({ createdAt: end - 1, id: keyOf(last) }, `list:${listing}`) };
}
