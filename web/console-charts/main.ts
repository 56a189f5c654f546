/**
 * The console's charting library, uPlot with its stylesheet, as a bundle of its own: the Insights
 * page loads it when first opened (web/console/charts.ts), so the other pages never download it.
 */
import uPlot from 'uplot';
import stylesheet from 'uplot/dist/uPlot.min.css';

const style = document.createElement('style');
style.textContent = stylesheet;
document.head.append(style);
window.loreCharts = uPlot;
