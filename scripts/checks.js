#!/usr/bin/env node
// `npm test`'s checks, side by side: `npm run lint` and `npm run typecheck` are one thread each
// (13.6 and 26.7 s of CPU on 2026-12-02), so on 2 cores they end in the time of the longer one
// instead of the sum. Each one's output is printed whole when it ends; any failure fails the run.
import { spawn } from 'node:child_process';

const checks = ['lint', 'typecheck'];
const results = await Promise.all(
  checks.map(
    (name) =>
      new Promise((done) => {
        const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        const started = performance.now();
        child.on('close', (code) => {
          const seconds = ((performance.now() - started) / 1000).toFixed(1);
          process.stdout.write(`${Buffer.concat(output).toString()}# npm run ${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} in ${seconds} s\n`);
          done(code === 0);
        });
      }),
  ),
);
process.exit(results.every(Boolean) ? 0 : 1);
