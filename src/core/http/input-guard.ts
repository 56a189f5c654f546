import type { FastifyInstance } from 'fastify';
import type { FieldError } from '../errors.ts';
import { validationError } from './validation-messages.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Top-level body properties whose text is repaired rather than refused: NUL characters
     * removed, unpaired surrogates replaced by U+FFFD. For ingested content, where a stray NUL
     * from a PDF extraction should not cost the whole submission.
     */
    repairTextIn?: readonly string[];
  }
}

/**
 * How deeply JSON input may nest (objects and arrays). The deepest payload lore defines is a
 * content-hub export, 6 levels; metadata is free-form but flat in practice. 64 leaves room while
 * keeping every later recursion (validation, JSON.stringify, jsonb) far from the stack limit,
 * which 5,000 levels reached.
 */
export const MAX_JSON_DEPTH = 64;

// A body with thousands of bad strings needs only the first few to be fixed.
const MAX_REPORTED = 20;

const NUL = '\u0000';

/** Text PostgreSQL cannot store: a NUL character, or an unpaired UTF-16 surrogate (invalid in jsonb and UTF-8). */
export function unstorable(text: string): boolean {
  return text.includes(NUL) || !text.isWellFormed();
}

function repairText(text: string): string {
  return text.replaceAll(NUL, '').toWellFormed();
}

function pointer(path: readonly (string | number)[]): string {
  return `/${path.map((part) => String(part).replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

// A node keeps its parent and key rather than its whole path: paths are only built for the few
// problems reported, which cut the walk of a 25 MB job payload from 35-63 ms to 17-28 ms.
type Node = { value: unknown; parent: Node | undefined; key: string | number; depth: number; repair: boolean };

function pathOf(node: Node | undefined, last?: string | number): (string | number)[] {
  const path: (string | number)[] = last === undefined ? [] : [last];
  for (let at = node; at?.parent; at = at.parent) path.unshift(at.key);
  return path;
}

/**
 * Walks parsed JSON without recursion (a hostile body may nest 100,000 levels), and reports the
 * first problems: nesting beyond MAX_JSON_DEPTH, unstorable text in a value or a key, and numbers
 * too large to be numbers (1e400 parses as Infinity, which would be stored as null). Unstorable
 * text under the top-level properties named in `repairTextIn` (or anywhere, with `repairText`)
 * is repaired in place instead of reported.
 */
export function inspectJson(root: unknown, options: { repairText?: boolean; repairTextIn?: readonly string[] } = {}): FieldError[] {
  const problems: FieldError[] = [];
  const stack: Node[] = [{ value: root, parent: undefined, key: '', depth: 0, repair: options.repairText ?? false }];
  const report = (path: (string | number)[], message: string) => {
    if (problems.length < MAX_REPORTED) problems.push({ path: pointer(path), message });
  };
  // Repairs a string held at `key` of `container`; false when it is not a string to repair.
  const repaired = (container: unknown[] | Record<string, unknown>, key: string | number, repair: boolean) => {
    const slots = container as Record<string | number, unknown>;
    const item = slots[key];
    if (!repair || typeof item !== 'string' || !unstorable(item)) return false;
    slots[key] = repairText(item);
    return true;
  };
  while (stack.length > 0 && problems.length < MAX_REPORTED) {
    const node = stack.pop()!;
    const { value, depth, repair } = node;
    if (typeof value === 'string') {
      if (unstorable(value)) report(pathOf(node), 'must not contain NUL characters or unpaired surrogates');
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) report(pathOf(node), 'is a number out of range');
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      report(pathOf(node), `nests deeper than ${MAX_JSON_DEPTH} levels`);
      continue;
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (!repaired(value, index, repair)) stack.push({ value: item, parent: node, key: index, depth: depth + 1, repair });
      });
      continue;
    }
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) {
      const repairHere = repair || (depth === 0 && (options.repairTextIn?.includes(key) ?? false));
      let name = key;
      if (unstorable(key)) {
        if (!repairHere) {
          report(pathOf(node, key), 'is a key that contains NUL characters or unpaired surrogates');
          continue;
        }
        name = repairText(key);
        // defineProperty: a repaired key may read "__proto__", which assignment would treat as the prototype.
        Object.defineProperty(object, name, { value: object[key], enumerable: true, writable: true, configurable: true });
        delete object[key];
      }
      if (!repaired(object, name, repairHere)) stack.push({ value: object[name], parent: node, key: name, depth: depth + 1, repair: repairHere });
    }
  }
  return problems;
}

/** Throws the 400 for a list of problems found in one part of a request. */
export function refuseProblems(problems: FieldError[]): void {
  if (problems.length > 0) throw validationError(problems);
}

function prefixed(problems: FieldError[], part: string): FieldError[] {
  return problems.map((problem) => ({ ...problem, path: `${part}:${problem.path}` }));
}

/**
 * One check for every route, before any handler: JSON too deep to handle safely, text that
 * PostgreSQL cannot store (it answered 500 with SQLSTATE 22021), and numbers that are not finite.
 * The body is checked before validation, so that nothing recurses over it first; the query string
 * and path parameters after it, as coerced: ajv turns `?offset=Infinity` into Infinity and lets it
 * through even with `strictNumbers`. A 400 names each place by JSON pointer.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    refuseProblems(inspectJson(request.body, { repairTextIn: request.routeOptions.config?.repairTextIn }));
  });
  app.addHook('preHandler', async (request) => {
    refuseProblems([...prefixed(inspectJson(request.query), 'querystring'), ...prefixed(inspectJson(request.params), 'params')]);
  });
}
