/** A schema failure in a few words: where and what, without the values (they may be huge). */
export function describeIssues(error: unknown): string {
  const issues = (error as { issues?: Array<{ path?: PropertyKey[]; message?: string }> } | undefined)?.issues ?? [];
  const described = issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "(root)"}: ${issue.message ?? "invalid"}`);
  return described.length > 0 ? described.join("; ") : "does not match the request schema";
}
