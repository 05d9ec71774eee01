import { distance as editDistance } from "fastest-levenshtein";

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
