/** parse-prometheus-text-format ships no types: its output, prom2json's shape, as far as the tests read it. */
declare module 'parse-prometheus-text-format' {
  export interface PromSample {
    readonly labels?: Readonly<Record<string, string>>;
    /** Counters and gauges. */
    readonly value?: string;
    /** Histograms: cumulative counts by upper bound, and the totals. */
    readonly buckets?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  export interface PromFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly PromSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PromFamily[];
}
