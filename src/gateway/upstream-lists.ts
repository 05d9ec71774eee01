/** Items an upstream list is followed for at most, so a runaway listing cannot exhaust the gateway. */
export const MAX_LISTED = 10_000;

/** Every item of a paginated upstream list, following `nextCursor` (up to {@link MAX_LISTED}). */
export async function listAll<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    items.push(...next.items);
    cursor = next.nextCursor;
  } while (cursor !== undefined && items.length < MAX_LISTED);
  return items;
}
