import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describeSchemaErrors, pointerSegment } from '../../../core/http/validation-messages.ts';
import type { AdapterIssue } from './adapter.ts';

/** validate() reports at most this many issues: enough to fix a payload, small enough for a 400 body. */
export const maxIssues = 100;

/** The pattern adapter schemas put on URL fields, next to `format: uri`. */
export const httpUrlPattern = '^https?://';

// JSON Schema 2020-12, the dialect of OpenAPI 3.1, so the schemas adapters publish are the ones
// enforced here. `unicode: false` measures strings with .length like the rest of lore instead of
// walking every character: 10,000 records of 2 KB validate in about 7 ms of CPU instead of about
// 100 ms. Ajv still honours it but logs a deprecation on every instance; the schemas are fixed and
// tested, so its logger is off. `verbose` gives each error its schema and value, from which
// validation-messages.ts words it, as it does for every route's own schema.
const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false, unicode: false, logger: false });
addFormats.default(ajv, ['uri']);

export { pointerSegment };

/**
 * Compiles a JSON Schema into a function listing the problems of a value as adapter issues, their
 * paths prefixed with `at`, the pointer of the value inside the payload.
 */
export function compileSchema(schema: object): (data: unknown, at?: string) => AdapterIssue[] {
  const validate = ajv.compile(schema);
  return (data, at = '') => (validate(data) ? [] : describeSchemaErrors(validate.errors ?? [], at));
}

function compareSegments(left: string, right: string): number {
  const leftIsIndex = /^\d+$/.test(left);
  const rightIsIndex = /^\d+$/.test(right);
  if (leftIsIndex && rightIsIndex) return Number(left) - Number(right);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Orders pointers by position in the document: `/records/2/id` before `/records/10/content`. */
export function comparePointers(left: string, right: string): number {
  const leftSegments = left.split('/');
  const rightSegments = right.split('/');
  for (let index = 0; index < Math.min(leftSegments.length, rightSegments.length); index += 1) {
    const order = compareSegments(leftSegments[index]!, rightSegments[index]!);
    if (order !== 0) return order;
  }
  return leftSegments.length - rightSegments.length;
}

/**
 * The issues of one payload: one per path (the first found), reported in document order, at most
 * `maxIssues`. Adapters check records in order and stop once it is `full`, so a payload of 10,000
 * broken records costs no more than its first hundred problems.
 */
export class IssueList {
  private readonly byPath = new Map<string, AdapterIssue>();

  add(...issues: AdapterIssue[]): void {
    for (const issue of issues) if (!this.byPath.has(issue.path)) this.byPath.set(issue.path, issue);
  }

  get full(): boolean {
    return this.byPath.size >= maxIssues;
  }

  toArray(): AdapterIssue[] {
    return [...this.byPath.values()].sort((left, right) => comparePointers(left.path, right.path)).slice(0, maxIssues);
  }
}

/** Whether a value is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const nonBlank = /\S/;

/** Whether a string has a character other than whitespace. */
export function isNonBlank(text: string): boolean {
  return nonBlank.test(text);
}

/** Remembers the ids of a payload's records to report blank ones and repeats. */
export class UniqueIds {
  private readonly firstIndexOfId = new Map<string, number>();

  /**
   * @param field the id's field name in messages (`id`, `documentIdentifier`)
   * @param recordPointer the pointer of record `index`, to say which record an id repeats
   */
  constructor(
    private readonly field: string,
    private readonly recordPointer: (index: number) => string,
  ) {}

  /** The problem with the id of record `index` (at `path`), if any. Ids that are not non-empty strings are the schema's to report. */
  check(id: unknown, index: number, path: string): AdapterIssue | undefined {
    if (typeof id !== 'string' || id === '') return undefined;
    if (!isNonBlank(id)) return { path, message: 'must not be blank' };
    const firstIndex = this.firstIndexOfId.get(id);
    if (firstIndex === undefined) {
      this.firstIndexOfId.set(id, index);
      return undefined;
    }
    return { path, message: `duplicates the ${this.field} of ${this.recordPointer(firstIndex)}` };
  }
}
