#!/usr/bin/env node
// The import check of `npm run lint` (issue 36). It fails on
// - an import circle between modules, type-only imports included: a circle makes the order in which
//   modules run depend on which one is imported first, and a type-only one still ties two files
//   that a reader must understand together;
// - a loop between feature folders: src/features/A imports B and B imports A, directly or through
//   other features, so that neither can be read, tested or moved without the other;
// - an import that points up the floors of src/ (core, features, app.ts, server.ts, client, cli):
//   each floor imports only from its own and the ones below. Tests may reach up (a feature's tests
//   build the app).
// madge builds the graph (TypeScript's own resolution through tsconfig.json); the rules are ours.
import madge from 'madge';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folders whose modules are checked, relative to the repository. */
export const CHECKED = ['src', 'test', 'bench', 'scripts', 'web', 'bin'];

/** The floors of src/, lowest first: a module imports only from its floor and those below. */
export const FLOORS = ['src/core/', 'src/features/', 'src/app.ts', 'src/server.ts', 'src/client/', 'src/cli/'];

const FEATURE = /^src\/features\/([^/]+)\//;
const isTest = (file) => /\.test\.tsx?$/.test(file);
const floorOf = (file) => FLOORS.findIndex((floor) => file === floor || file.startsWith(floor));

/** The import graph of `dirs` under `root` (those that exist): each module, relative to `root`, and what it imports. */
export async function importGraph(root, dirs = CHECKED, tsConfig = join(root, 'tsconfig.json')) {
  const result = await madge(
    dirs.map((dir) => join(root, dir)).filter((dir) => existsSync(dir)),
    {
      baseDir: root,
      fileExtensions: ['ts', 'tsx', 'js'],
      tsConfig,
      excludeRegExp: [/node_modules/, /(^|\/)dist\//],
      // madge's default keeps type-only imports too; said here because the rule depends on it.
      detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
    },
  );
  return result.obj();
}

/** Strongly connected components of a graph (Tarjan), each with more than one node. */
function loopsOf(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node), index.get(to)));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    for (let member; member !== node; ) {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    }
    if (component.length > 1) components.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/** The shortest path from `start` back to itself through `members`: one loop a component holds. */
function loopThrough(graph, members, start) {
  const previous = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const to of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(to)) continue;
      if (to === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0]));
        return [...path, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start];
}

/** A module graph's circles, feature-folder loops and upward imports, each naming its files. */
export function findProblems(modules) {
  const graph = new Map(Object.entries(modules).map(([file, imports]) => [file, new Set(imports)]));

  const circles = loopsOf(graph).map((component) => {
    const start = [...component].sort()[0];
    return loopThrough(graph, new Set(component), start);
  });

  const features = new Map();
  const witness = new Map();
  for (const [file, imports] of graph) {
    const from = FEATURE.exec(file)?.[1];
    if (!from) continue;
    for (const target of imports) {
      const to = FEATURE.exec(target)?.[1];
      if (!to || to === from) continue;
      if (!features.has(from)) features.set(from, new Set());
      features.get(from).add(to);
      if (!witness.has(`${from} ${to}`)) witness.set(`${from} ${to}`, `${file} -> ${target}`);
    }
  }
  const featureLoops = loopsOf(features).map((component) => {
    const path = loopThrough(features, new Set(component), [...component].sort()[0]);
    return { features: path, imports: path.slice(1).map((to, step) => witness.get(`${path[step]} ${to}`)) };
  });

  const upward = [];
  for (const [file, imports] of graph) {
    const floor = floorOf(file);
    if (floor < 0 || isTest(file)) continue;
    for (const target of imports) if (floorOf(target) > floor) upward.push(`${file} -> ${target}`);
  }
  return { circles, featureLoops, upward: upward.sort() };
}

/** The report of `findProblems`, one line per problem and file; empty when there is none. */
export function describeProblems({ circles, featureLoops, upward }) {
  return [
    ...circles.map((circle) => `import circle: ${circle.join(' -> ')}`),
    ...featureLoops.flatMap((loop) => [`feature folders loop: ${loop.features.join(' -> ')}`, ...loop.imports.map((line) => `  ${line}`)]),
    ...upward.map((line) => `import points up the floors (${FLOORS.join(' < ')}): ${line}`),
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? '.');
  const modules = await importGraph(root);
  const lines = describeProblems(findProblems(modules));
  if (lines.length > 0) {
    console.error(lines.join('\n'));
    process.exit(1);
  }
  console.log(`check-imports: ${Object.keys(modules).length} modules under ${CHECKED.join(', ')} of ${relative(process.cwd(), root) || '.'}: no import circle, no loop between feature folders, no import up the floors.`);
}
