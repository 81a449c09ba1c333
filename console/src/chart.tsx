import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  readonly label: string;
  /** One a label; null: no point there (a gap in a line). */
  readonly values: readonly (number | null)[];
  readonly color: string;
}

/** Bars side by side: each series takes its share of the category's width. */
function barsOf(index: number, count: number) {
  const share = 0.8 / count;
  return uPlot.paths.bars?.({ size: [share, 40], align: index < count / 2 ? -1 : 1 });
}

/**
 * A uPlot chart: lines over days, or bars over categories. The figures it draws are also in the table the page
 * shows with it, which is what a screen reader reads (the canvas is hidden from it).
 */
export function Chart(props: { id: string; title: string; labels: readonly string[]; series: readonly Series[]; kind: 'line' | 'bar'; percent?: boolean; unit?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const xs = props.labels.map((_, i) => i);
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth || 640),
        height: 220,
        legend: { show: true },
        cursor: { show: true },
        scales: {
          // Categories sit at whole numbers with half a step either side; counts start at zero.
          x: { time: false, ...(props.kind === 'bar' && { range: (): uPlot.Range.MinMax => [-0.5, Math.max(0, props.labels.length - 1) + 0.5] }) },
          y: { range: (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          {
            values: (_u, splits) => splits.map((i) => (Number.isInteger(i) ? (props.labels[i] ?? '') : '')),
            ...(props.kind === 'bar' && { splits: () => props.labels.map((_, i) => i) }),
            stroke: '#333',
            grid: { stroke: '#e4e4e4' },
          },
          {
            stroke: '#333',
            grid: { stroke: '#e4e4e4' },
            ...(props.percent && { values: (_u: uPlot, v: number[]) => v.map((n) => `${n}%`) }),
            // The currency of an amount's axis (COST_CURRENCY).
            ...(props.unit && { label: props.unit }),
          },
        ],
        series: [
          { label: 'x' },
          ...props.series.map((s, i) => {
            const bars = props.kind === 'bar' ? barsOf(i, props.series.length) : undefined;
            return { label: s.label, stroke: s.color, width: 2, ...(bars && { paths: bars, fill: `${s.color}cc`, points: { show: false } }) };
          }),
        ],
      },
      [xs, ...props.series.map((s) => [...s.values])],
      el,
    );
    el.querySelector('canvas')?.setAttribute('aria-hidden', 'true');
    return () => plot.destroy();
  }, [props.labels.join('|'), JSON.stringify(props.series)]);
  return (
    <figure class="chart" aria-labelledby={`${props.id}-title`}>
      <figcaption id={`${props.id}-title`}>{props.title}</figcaption>
      <div ref={box} id={props.id} class="plot" data-series={JSON.stringify(props.series.map((s) => ({ label: s.label, values: s.values })))} />
    </figure>
  );
}
