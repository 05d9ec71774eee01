/**
 * Whether a parsed JSON value nests arrays or objects more than `max` levels deep. Iterative:
 * the values it guards against would overflow the stack of any recursive walk — including
 * JSON.stringify and structuredClone, which every stored request goes through.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}
