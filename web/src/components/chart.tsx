import { BarChart, LineChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { init, use, type ECharts, type EChartsCoreOption } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

// Only what the dashboards draw: lines, stacked bars, axes, tooltips, legends (docs/decisions.md, "Charts").
use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, CanvasRenderer]);

/** The element a chart draws into, with its ECharts instance (what a test reads the drawn data from). */
export type ChartElement = HTMLDivElement & { chart?: ECharts };

/**
 * One ECharts chart. Options replace the last ones whole (`notMerge`), so what the
 * chart holds is exactly what the page computed from the API's answer; it follows
 * its box's size.
 */
export function Chart({ option, label, name, height = 220 }: { option: EChartsCoreOption; label: string; name: string; height?: number }) {
  const box = useRef<ChartElement>(null);
  useEffect(() => {
    const element = box.current!;
    const chart = init(element, undefined, { renderer: 'canvas' });
    element.chart = chart;
    const resize = new ResizeObserver(() => chart.resize());
    resize.observe(element);
    return () => {
      resize.disconnect();
      delete element.chart;
      chart.dispose();
    };
  }, []);
  useEffect(() => {
    box.current?.chart?.setOption(option, { notMerge: true, lazyUpdate: false });
  }, [option]);
  return <div ref={box} className="chart" role="img" aria-label={label} data-chart={name} style={{ height }} />;
}

/**
 * Tooltips drawn on the chart's canvas, kept inside its box: ECharts' HTML tooltips
 * write inline `style` attributes, which the page's Content-Security-Policy refuses
 * (each a console error; the names and numbers then ran together, "sim136 tokens").
 */
export const TOOLTIP = { renderMode: 'richText', confine: true } as const;

/** A line chart over time from columns of a series answer (timestamps in Unix seconds). */
export function timeLines(timestamps: number[], lines: Array<{ name: string; values: Array<number | null>; stack?: string; area?: boolean }>, unit: string): EChartsCoreOption {
  return {
    animation: false,
    grid: { left: 56, right: 16, top: 32, bottom: 28 },
    legend: { top: 0, type: 'scroll' },
    tooltip: { ...TOOLTIP, trigger: 'axis', valueFormatter: (v: unknown) => (typeof v === 'number' ? `${formatNumber(v)} ${unit}` : '–') },
    xAxis: { type: 'time' },
    yAxis: { type: 'value', name: unit, nameGap: 8, min: 0 },
    series: lines.map((l) => ({
      name: l.name,
      type: 'line',
      showSymbol: false,
      connectNulls: false,
      ...(l.stack ? { stack: l.stack } : {}),
      ...(l.area ? { areaStyle: {} } : {}),
      data: timestamps.map((t, i) => [t * 1000, l.values[i] ?? null]),
    })),
  };
}

/** A small line without axes (the overview's sparklines). */
export function sparkline(timestamps: number[], values: Array<number | null>): EChartsCoreOption {
  return {
    animation: false,
    grid: { left: 2, right: 2, top: 4, bottom: 4 },
    xAxis: { type: 'time', show: false },
    yAxis: { type: 'value', show: false, min: 0 },
    tooltip: { ...TOOLTIP, trigger: 'axis', valueFormatter: (v: unknown) => (typeof v === 'number' ? formatNumber(v) : '–') },
    series: [{ type: 'line', showSymbol: false, areaStyle: { opacity: 0.25 }, data: timestamps.map((t, i) => [t * 1000, values[i] ?? null]) }],
  };
}

export function formatNumber(v: number): string {
  if (Math.abs(v) >= 1e9) return `${(v / 1e9).toFixed(1)} G`;
  if (Math.abs(v) >= 1e6) return `${(v / 1e6).toFixed(1)} M`;
  if (Math.abs(v) >= 1e4) return `${(v / 1e3).toFixed(1)} k`;
  return Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
}
