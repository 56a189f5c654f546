#!/usr/bin/env node
// Bundles the browser pages the service serves: every `web/<name>/main.ts` or `main.tsx` becomes
// one minified file `dist/web/<name>.js` (src/features/web/ serves them). Prints each bundle's
// size and gzip size and fails when a bundle exceeds its gzip budget: the widget is embedded on
// other people's sites, so issue 5 caps it at 60 KB gzip.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const webDir = join(root, 'web');
const outDir = join(root, 'dist', 'web');

/** Gzip budgets in bytes, by bundle name. */
// The widget's is issue 5's limit; the console's keeps an operator page quick to load. The
// console's charts (uPlot) are a bundle of their own that only the Insights page loads.
const gzipBudgets = { widget: 60 * 1024, console: 40 * 1024, 'console-charts': 30 * 1024 };

function entries() {
  return readdirSync(webDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const main = ['main.tsx', 'main.ts'].map((file) => join(webDir, entry.name, file)).find((file) => existsSync(file));
      return main ? [{ name: entry.name, main }] : [];
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

let failed = false;
for (const { name, main } of entries()) {
  const outfile = join(outDir, `${name}.js`);
  await build({
    entryPoints: [main],
    outfile,
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    // A library's stylesheet is bundled as text, which the script puts in a <style> element.
    loader: { '.css': 'text' },
    logLevel: 'warning',
  });
  const bytes = readFileSync(outfile);
  const gzip = gzipSync(bytes, { level: 9 }).length;
  const budget = gzipBudgets[name];
  const over = budget !== undefined && gzip > budget;
  if (over) failed = true;
  console.log(
    `${relative(root, outfile)}: ${kb(bytes.length)}, ${kb(gzip)} gzip${budget === undefined ? '' : ` (budget ${kb(budget)})`}${over ? ' OVER BUDGET' : ''}`,
  );
}
if (failed) {
  console.error('build-web: a bundle exceeds its gzip budget');
  process.exit(1);
}
