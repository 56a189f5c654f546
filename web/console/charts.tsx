/**
 * The Insights page's line charts, drawn by uPlot (small and fast: 23.5 KB gzip with its styles,
 * where Chart.js is about 70). The library is its own bundle (web/console-charts/), loaded the
 * first time a chart is drawn: with it the console bundle would exceed its 40 KB gzip budget.
 */
import type uPlot from 'uplot';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNotice } from './ui.tsx';

let loading: Promise<typeof uPlot> | undefined;

/** uPlot, loading /console-charts.js once (a failed load is tried again by the next chart). */
export function loadCharts(): Promise<typeof uPlot> {
  loading ??= new Promise<typeof uPlot>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/console-charts.js';
    script.onload = () => (window.loreCharts ? resolve(window.loreCharts) : reject(new Error('The charts script did not load.')));
    script.onerror = () => {
      loading = undefined;
      script.remove();
      reject(new Error('The charts script could not be loaded.'));
    };
    document.head.append(script);
  });
  return loading;
}

export type ChartSeries = { label: string; color: string; values: Array<number | null> };

const HEIGHT = 200;
type DailyChartProps = {
  title: string;
  /** YYYY-MM-DD, UTC days. */
  days: string[];
  series: ChartSeries[];
  formatValue: (value: number) => string;
  /** The top of the value axis (1 for shares); default: the largest value. */
  max?: number;
};

/**
 * A titled line chart of values per day, as wide as its container and redrawn at the container's
 * width when that changes (a phone turned, a window resized).
 */
export function DailyChart({ title, days, series, formatValue, max }: DailyChartProps) {
  const container = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>();
  const key = JSON.stringify([days, series, max]);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let chart: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let cancelled = false;
    loadCharts().then(
      (UPlot) => {
        if (cancelled) return;
        // Canvas colours cannot be CSS variables: the page's own text colour keeps axes readable in dark mode.
        const ink = getComputedStyle(element).color;
        const axis = { stroke: ink, grid: { stroke: 'rgba(128, 128, 128, 0.2)' }, ticks: { stroke: 'rgba(128, 128, 128, 0.3)' } };
        chart = new UPlot(
          {
            width: element.clientWidth,
            height: HEIGHT,
            // The days are UTC days: ticks read as such whatever the browser's time zone.
            tzDate: (seconds) => UPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
            scales: { y: { range: (_chart, _min, dataMax) => [0, max ?? (dataMax > 0 ? dataMax : 1)] } },
            series: [
              {},
              ...series.map(({ label, color }) => ({
                label,
                stroke: color,
                width: 2,
                points: { show: true, size: 5 },
                value: (_chart: uPlot, value: number | null) => (value === null ? '—' : formatValue(value)),
              })),
            ],
            axes: [axis, { ...axis, size: 72, values: (_chart, ticks) => ticks.map(formatValue) }],
            legend: { live: false },
          },
          [days.map((day) => Date.parse(day) / 1000), ...series.map(({ values }) => values)],
          element,
        );
        resize = new ResizeObserver(() => chart?.setSize({ width: element.clientWidth, height: HEIGHT }));
        resize.observe(element);
      },
      (failure: unknown) => setError(failure),
    );
    return () => {
      cancelled = true;
      resize?.disconnect();
      chart?.destroy();
    };
  }, [key]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <ErrorNotice error={error} />
      <div class="chart-plot" ref={container} />
    </figure>
  );
}
