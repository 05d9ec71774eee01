/** Reading Prometheus text exposition in tests: fetch /metrics and look samples up by name and labels. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the sample lines of a Prometheus text exposition (comments skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ""] = (pair[2] ?? "").replace(/\\(.)/g, "$1");
    }
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample with this name whose labels include `labels`; 0 when there is none. */
export function valueOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

/** GETs /metrics next to `mcpUrl` and parses it. */
export async function scrape(mcpUrl: URL | string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const response = await fetch(new URL("/metrics", mcpUrl), { headers });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return parseSamples(await response.text());
}
