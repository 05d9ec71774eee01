/** Levenshtein distance (insertions, deletions, substitutions each cost 1). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * The candidates closest to `word`, closest first: only those a typo away (at most a third of the
 * word's length, and at least 1), so an unrelated name is never offered.
 */
export function closest(word: string, candidates: readonly string[]): string[] {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const scored = candidates
    .map((candidate) => ({ candidate, distance: editDistance(word.toLowerCase(), candidate.toLowerCase()) }))
    .filter((s) => s.distance <= limit);
  const best = Math.min(...scored.map((s) => s.distance));
  return scored.filter((s) => s.distance === best).map((s) => s.candidate);
}
