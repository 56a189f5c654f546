/**
 * Where this process's main thread spends its time while `work` runs: a V8 CPU profile of it,
 * its self time summed by what the code belongs to (the PostgreSQL driver, response
 * serialization, lore's own modules, ...), in milliseconds.
 */
import { Session } from 'node:inspector/promises';

type ProfileNode = { id: number; callFrame: { functionName: string; url: string }; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/**
 * The first rule whose pattern matches a frame's script URL (or, for a frame without one, its
 * function name) names its category. Response serializers (fast-json-stringify) and validators
 * (ajv) are compiled with `new Function`: no URL, functions named `anonymous…` and `validate…`.
 */
const categories: [string, RegExp][] = [
  ['idle', /^\(idle\)$/],
  ['garbageCollection', /^\(garbage collector\)$/],
  ['serialization (fast-json-stringify, ajv)', /node_modules\/(fast-json-stringify|@fastify\/fast-json-stringify-compiler|ajv|ajv-formats|fast-uri)\/|^(anonymous|validate)\d*$/],
  ['pgDriver (pg, pg-protocol, pg-types)', /node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+)\//],
  ['pglite', /node_modules\/@electric-sql\//],
  ['fastify', /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-querystring|pino)/],
  ['auth (jose)', /node_modules\/jose\//],
  ['lore', /\/src\//],
  ['nodeHttpAndStreams', /^node:(internal\/)?(_?http|net|stream|streams|buffer|internal\/streams|zlib)/],
];

/**
 * A sample's category: its own frame's, or for a native function (a socket write, a string
 * decoded from a buffer) the category of the nearest caller that has one.
 */
function categorizer(nodes: ProfileNode[]): (id: number) => string {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  return (id) => {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const { url, functionName } = byId.get(at)!.callFrame;
      const rule = categories.find(([, pattern]) => pattern.test(url || functionName));
      if (rule) return rule[0];
      if (url) return url.startsWith('node:') ? 'nodeOther' : 'other';
    }
    return 'other';
  };
}

/** Runs `work` under the profiler; returns its result and the main thread's milliseconds per category. */
export async function profiled<T>(work: () => Promise<T>): Promise<{ result: T; msByCategory: Record<string, number> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  let result: T;
  let profile: Profile;
  try {
    result = await work();
  } finally {
    ({ profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile });
    session.disconnect();
  }
  const categoryOf = categorizer(profile.nodes);
  const msByCategory: Record<string, number> = {};
  profile.samples.forEach((id, index) => {
    const category = categoryOf(id);
    msByCategory[category] = (msByCategory[category] ?? 0) + profile.timeDeltas[index]! / 1000;
  });
  return { result, msByCategory };
}
