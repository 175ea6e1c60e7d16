// Metrics in the Prometheus text exposition format (version 0.0.4), and a
// small sliding window for latency quantiles.

export type MetricType = "counter" | "gauge" | "summary";

export interface Sample {
  labels?: Record<string, string>;
  value: number;
  /** For summaries: `_sum`, `_count`, or a quantile sample (labels carry `quantile`). */
  suffix?: "_sum" | "_count";
}

export interface Metric {
  name: string;
  help: string;
  type: MetricType;
  samples: Sample[];
}

/** Renders metrics as Prometheus text; samples of one name share one HELP/TYPE. */
export function renderPrometheus(metrics: readonly Metric[]): string {
  const merged = new Map<string, Metric>();
  for (const metric of metrics) {
    const existing = merged.get(metric.name);
    if (existing) existing.samples.push(...metric.samples);
    else merged.set(metric.name, { ...metric, samples: [...metric.samples] });
  }
  const lines: string[] = [];
  for (const metric of merged.values()) {
    lines.push(`# HELP ${metric.name} ${escapeHelp(metric.help)}`);
    lines.push(`# TYPE ${metric.name} ${metric.type}`);
    for (const sample of metric.samples) {
      lines.push(
        `${metric.name}${sample.suffix ?? ""}${labelText(sample.labels)} ${
          formatValue(sample.value)
        }`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

function labelText(labels: Record<string, string> | undefined): string {
  if (!labels) return "";
  const pairs = Object.entries(labels).map(([name, value]) =>
    `${name}="${escapeLabel(value)}"`
  );
  return pairs.length ? `{${pairs.join(",")}}` : "";
}

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll(
    '"',
    '\\"',
  );
}

function escapeHelp(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** The last `size` observations, for p50/p95 without unbounded memory. */
export class LatencyWindow {
  readonly #values: Float64Array;
  #next = 0;
  #filled = 0;
  #count = 0;
  #sum = 0;

  constructor(size = 1024) {
    this.#values = new Float64Array(size);
  }

  observe(ms: number): void {
    this.#values[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#values.length;
    this.#filled = Math.min(this.#filled + 1, this.#values.length);
    this.#count++;
    this.#sum += ms;
  }

  /** Totals since start (for `_count` and `_sum`). */
  get count(): number {
    return this.#count;
  }

  get sum(): number {
    return this.#sum;
  }

  /** The q-quantile (0..1) of the window; NaN when empty. */
  quantile(q: number): number {
    if (this.#filled === 0) return NaN;
    const sorted = this.#values.slice(0, this.#filled).sort();
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  }

  /** Summary samples with quantiles 0.5 and 0.95 plus `_sum` and `_count`. */
  samples(labels: Record<string, string> = {}): Sample[] {
    return [
      { labels: { ...labels, quantile: "0.5" }, value: this.quantile(0.5) },
      { labels: { ...labels, quantile: "0.95" }, value: this.quantile(0.95) },
      { labels, value: this.#sum, suffix: "_sum" },
      { labels, value: this.#count, suffix: "_count" },
    ];
  }
}

/** Events per second over a trailing window, for /health (Prometheus derives rates itself). */
export class RateMeter {
  readonly #windowMs: number;
  readonly #clock: () => number;
  #events: number[] = [];

  constructor(windowMs = 60_000, clock: () => number = Date.now) {
    this.#windowMs = windowMs;
    this.#clock = clock;
  }

  mark(): void {
    const now = this.#clock();
    this.#events.push(now);
    if (this.#events.length > 10_000) this.#trim(now);
  }

  perSecond(): number {
    const now = this.#clock();
    this.#trim(now);
    return this.#events.length / (this.#windowMs / 1000);
  }

  #trim(now: number): void {
    const cutoff = now - this.#windowMs;
    let first = 0;
    while (first < this.#events.length && this.#events[first] < cutoff) first++;
    if (first > 0) this.#events = this.#events.slice(first);
  }
}
