/** One sample of the Prometheus text exposition format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses `/metrics` text (enough of the format for prom-client's output). */
export function parsePromText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key!] = raw!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `where`. */
export function total(samples: Sample[], name: string, where: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** `{ "<label values joined by |>": value }` for the samples named `name`, zero-valued ones left out. */
export function byLabels(samples: Sample[], name: string, labels: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples.filter((x) => x.name === name && x.value !== 0)) {
    const key = labels.map((l) => s.labels[l] ?? '').join('|');
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}
