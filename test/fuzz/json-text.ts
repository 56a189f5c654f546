/**
 * JSON bodies as text. Generated bodies are JavaScript values with a few markers in them, for what
 * a JavaScript value cannot hold or should not hold while fast-check prints and shrinks it: number
 * literals such as 1e400 or -0, nesting 100,000 levels deep, and the ids of fixture resources
 * (known only once the server runs, so that a seed replays the same requests on another run).
 */
import type { ResourceKind } from './operations.ts';

/** JSON text written as is, e.g. `1e400`, `99999999999999999999`, `-0`. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** `{"a":{"a":...}}` or `[[...]]`, `depth` levels around `leaf`; written without recursion. */
export class Deep {
  constructor(
    readonly depth: number,
    readonly shape: 'object' | 'array',
    readonly leaf: unknown = 1,
  ) {}
}

/** The id of a fixture resource: the caller's own (`own`) or another workspace's (`foreign`). */
export class Ref {
  constructor(
    readonly resource: ResourceKind,
    readonly owner: 'own' | 'foreign' = 'own',
  ) {}
}

/** Resolves a fixture reference to its id. */
export type ResolveRef = (ref: Ref) => string;

/** The JSON text of `value`, with markers written out and references resolved. */
export function jsonText(value: unknown, resolve: ResolveRef): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof Ref) return JSON.stringify(resolve(value));
  if (value instanceof Deep) {
    const [open, close] = value.shape === 'object' ? ['{"a":', '}'] : ['[', ']'];
    return open.repeat(value.depth) + jsonText(value.leaf, resolve) + close.repeat(value.depth);
  }
  if (Array.isArray(value)) return `[${value.map((item) => jsonText(item, resolve)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    // As JSON.stringify does, members whose value is undefined are left out.
    const members = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item, resolve)}`);
    return `{${members.join(',')}}`;
  }
  // JSON.stringify escapes lone surrogates (`"\ud800"`), which is what a hostile client sends.
  return JSON.stringify(value) ?? 'null';
}

/** The value with references resolved (markers other than Ref written as their JSON text), for form fields. */
export function resolvedText(value: unknown, resolve: ResolveRef): string {
  if (value instanceof Ref) return resolve(value);
  if (typeof value === 'string') return value;
  return jsonText(value, resolve);
}
