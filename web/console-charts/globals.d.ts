import type uPlot from 'uplot';

declare global {
  interface Window {
    /** Set by the console-charts bundle once loaded (web/console/charts.tsx waits for it). */
    loreCharts?: typeof uPlot;
  }
}
