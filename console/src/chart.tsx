import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Series {
  readonly label: string;
  readonly values: readonly number[];
  readonly color: string;
}

const bars = uPlot.paths.bars?.({ size: [0.7, 48] });

/**
 * A uPlot chart: lines over days, or bars over categories. The figures it draws are also in the table the page
 * shows with it, which is what a screen reader reads (the canvas is hidden from it).
 */
export function Chart(props: { id: string; title: string; labels: readonly string[]; series: readonly Series[]; kind: 'line' | 'bar'; percent?: boolean }) {
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
        scales: { x: { time: false } },
        axes: [
          { values: (_u, splits) => splits.map((i) => props.labels[Math.round(i)] ?? ''), stroke: '#333', grid: { stroke: '#e4e4e4' } },
          { stroke: '#333', grid: { stroke: '#e4e4e4' }, ...(props.percent && { values: (_u: uPlot, v: number[]) => v.map((n) => `${n}%`) }) },
        ],
        series: [
          { label: 'x' },
          ...props.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            ...(props.kind === 'bar' && bars ? { paths: bars, fill: `${s.color}cc` } : {}),
          })),
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
