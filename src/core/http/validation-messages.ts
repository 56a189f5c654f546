import type { ErrorObject } from 'ajv';
import { AppError, type FieldError } from '../errors.ts';

/**
 * Every 400 about a request's fields says it here, in one wording: ajv's schema errors (every
 * route's body, query string and path parameters, and the ingestion adapters' payloads) and the
 * checks routes make by hand. Each field error is `{path, message}`: `path` a JSON pointer into
 * the validated part (prefixed `querystring:` or `params:` outside the body), `message` what is
 * wrong there, to be read after the field's name ("must not be empty"). The body's `message` names
 * the first field readably and counts the rest: "text must not be empty (and 1 more problem)."
 */

/** Escapes a property name for use as a JSON pointer segment (RFC 6901). */
export function pointerSegment(name: string | number): string {
  return String(name).replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

const parts: Record<string, { field: string; whole: string }> = {
  body: { field: '', whole: 'The request body' },
  querystring: { field: 'Query parameter ', whole: 'The query string' },
  params: { field: 'Path parameter ', whole: 'The path' },
  headers: { field: 'Header ', whole: 'The headers' },
};

/**
 * A field error's path as a person reads it: `/knowledgeBaseIds/2` is `knowledgeBaseIds[2]`,
 * `/settings/topK` is `settings.topK`, a key that is not a plain name is quoted
 * (`metadata["a b"]`), and `querystring:/limit` is `Query parameter limit`.
 */
export function fieldName(path: string): string {
  const match = /^([a-z]+):(\/.*)$/.exec(path);
  const part = parts[match?.[1] ?? 'body'] ?? parts.body!;
  const pointer = match ? match[2]! : path;
  // `/` is the whole part, as the error handler writes it (ajv's own pointer for it is empty).
  const segments = pointer === '/' ? [] : pointer.split('/').slice(1);
  if (segments.length === 0) return part.whole;
  const name = segments
    .map(unescapeSegment)
    .map((segment, index) => {
      if (/^\d+$/.test(segment) && index > 0) return `[${segment}]`;
      if (/^[A-Za-z_$][\w$-]*$/.test(segment)) return index === 0 ? segment : `.${segment}`;
      return index === 0 ? JSON.stringify(segment) : `[${JSON.stringify(segment)}]`;
    })
    .join('');
  return `${part.field}${name}`;
}

/** The body's `message` for a list of field errors: the first one, named, and how many more. */
export function summarize(errors: FieldError[]): string {
  const [first] = errors;
  if (!first) return 'The request is invalid.';
  const rest = errors.length - 1;
  const more = rest > 0 ? ` (and ${rest} more problem${rest === 1 ? '' : 's'})` : '';
  return `${fieldName(first.path)} ${first.message}${more}.`;
}

/** The 400 for field errors found by a route's own checks (the schema's are answered the same way). */
export function validationError(errors: FieldError[]): AppError {
  return new AppError('VALIDATION_FAILED', summarize(errors), { errors });
}

const typeNouns: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const formatNouns: Record<string, string> = {
  uuid: 'a UUID',
  uri: 'a valid URL',
  'uri-reference': 'a URL or a relative reference',
  'date-time': 'a date and time in ISO 8601 form (such as 2026-01-31T09:30:00Z)',
  date: 'a date in ISO 8601 form (such as 2026-01-31)',
  time: 'a time in ISO 8601 form (such as 09:30:00Z)',
  email: 'an email address',
  hostname: 'a host name',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
};

/**
 * Patterns lore's schemas use, by what they are for. A pattern not listed here is explained by
 * its schema's description when it has one.
 */
const patternMeanings: Record<string, string> = {
  '\\S': 'must not be blank',
  '^[^\\s\\p{Cc}]+$': 'must not contain whitespace or control characters',
  '^https?://': 'must be an http or https URL',
  '^https://[^\\s]+$': 'must be an https URL without spaces',
  '^(\\*\\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$':
    'must be a lower-case host name such as images.example.com, or *.example.com for its subdomains',
};

function schemaOf(error: ErrorObject): Record<string, unknown> {
  return (error.parentSchema ?? {}) as Record<string, unknown>;
}

function quote(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function typeNoun(type: unknown, schema: Record<string, unknown>): string {
  const types = Array.isArray(type) ? type : [type];
  return types
    .map((name) => (name === 'string' && typeof schema.format === 'string' && formatNouns[schema.format]) || typeNouns[String(name)] || String(name))
    .join(' or ');
}

function formatNoun(format: string): string {
  return formatNouns[format] ?? `a valid ${format}`;
}

/** What a value should have been, when the error is about the value's kind: a type, a format, a constant. */
function nounOf(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return typeNoun(params.type, schemaOf(error));
    case 'format':
      return formatNoun(String(params.format));
    case 'const':
      return JSON.stringify(params.allowedValue);
    case 'enum':
      return `one of: ${(params.allowedValues as unknown[]).map(quote).join(', ')}`;
    default:
      return undefined;
  }
}

function size(data: unknown): number | undefined {
  if (typeof data === 'string' || Array.isArray(data)) return data.length;
  return undefined;
}

function counted(limit: unknown, unit: string): string {
  return `${String(limit)} ${unit}${limit === 1 ? '' : 's'}`;
}

/** `(has 250)` after a length bound, when ajv kept the value (`verbose`). */
function actual(error: ErrorObject): string {
  const length = size(error.data);
  return length === undefined ? '' : ` (has ${length})`;
}

function patternMessage(error: ErrorObject): string {
  const pattern = String((error.params as { pattern?: unknown }).pattern);
  const known = patternMeanings[pattern];
  if (known) return known;
  const description = schemaOf(error).description;
  if (typeof description === 'string') return `does not have the expected form: ${description.replace(/\.$/, '')}`;
  return 'has an invalid format';
}

/** What is wrong with the value at an ajv error's path, in words to follow the field's name. */
function predicateOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const noun = nounOf(error);
  if (noun !== undefined) return `must be ${noun}`;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const known = Object.keys((schemaOf(error).properties as object | undefined) ?? {});
      return known.length > 0 ? `is not a known field (known fields: ${known.join(', ')})` : 'is not a known field';
    }
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must have at least ${counted(params.limit, 'character')}${actual(error)}`;
    case 'maxLength':
      return `must have at most ${counted(params.limit, 'character')}${actual(error)}`;
    case 'minItems':
      return `must have at least ${counted(params.limit, 'item')}${actual(error)}`;
    case 'maxItems':
      return `must have at most ${counted(params.limit, 'item')}${actual(error)}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${Math.min(Number(params.i), Number(params.j))} and ${Math.max(Number(params.i), Number(params.j))} are the same)`;
    case 'minProperties':
      return params.limit === 1 ? 'must set at least one field' : `must have at least ${counted(params.limit, 'field')}`;
    case 'maxProperties':
      return `must have at most ${counted(params.limit, 'field')}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`;
    case 'pattern':
      return patternMessage(error);
    case 'dependentRequired':
    case 'dependencies':
      return `is required when ${String(params.property)} is set`;
    case 'not':
      return 'is not allowed';
    case 'anyOf':
    case 'oneOf':
      return 'does not match any of the allowed forms';
    default:
      return error.message ?? 'is invalid';
  }
}

/** Where an ajv error points: missing and unknown properties point at the property itself. */
function pointerOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    return `${error.instancePath}/${pointerSegment(params.missingProperty)}`;
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `${error.instancePath}/${pointerSegment(params.additionalProperty)}`;
  }
  return error.instancePath;
}

function within(error: ErrorObject, parent: ErrorObject, schemaPrefix: string): boolean {
  const at = parent.instancePath;
  return error.schemaPath.startsWith(schemaPrefix) && (error.instancePath === at || error.instancePath.startsWith(`${at}/`));
}

/** An ajv error, with the words that replace its own once a union has been collapsed into it. */
type Item = { error: ErrorObject; message?: string };

/** A branch of a union that failed only because the value is of another kind (a string where null was allowed). */
function wrongKind(branch: Item[], at: string): boolean {
  return branch.length === 1 && branch[0]!.error.instancePath === at && ['type', 'const', 'enum'].includes(branch[0]!.error.keyword);
}

/** One message standing for a union's branches that each refused the value itself: "must be a UUID or null". */
function mergedBranches(union: ErrorObject, branches: Item[][]): Item | undefined {
  const nouns = branches.map(([first, ...others]) =>
    first && others.length === 0 && !first.message && first.error.instancePath === union.instancePath ? nounOf(first.error) : undefined,
  );
  if (nouns.some((noun) => noun === undefined)) return undefined;
  const unique = [...new Set(nouns as string[])];
  const words = unique.length > 1 ? `${unique.slice(0, -1).join(', ')} or ${unique.at(-1)}` : unique[0]!;
  return { error: union, message: `must be ${words}` };
}

/**
 * Keeps, of a union (`anyOf`, `oneOf`), the errors of the branch that matters. A branch the
 * value is not even the kind of (null for a string) does not: `"abc"` for a UUID-or-null is
 * "must be a UUID". When every branch refuses the value itself, one message names them all.
 */
function chooseBranch(union: ErrorObject, items: Item[]): Item[] {
  const prefix = `${union.schemaPath}/`;
  const byBranch = new Map<string, Item[]>();
  for (const item of items) {
    if (!within(item.error, union, prefix)) continue;
    const branch = item.error.schemaPath.slice(prefix.length).split('/', 1)[0]!;
    byBranch.set(branch, [...(byBranch.get(branch) ?? []), item]);
  }
  // A oneOf that more than one branch matched has no branch errors.
  if (byBranch.size === 0) return [{ error: union, message: 'matches more than one of the allowed forms' }];
  const branches = [...byBranch.values()];
  const relevant = branches.filter((branch) => !wrongKind(branch, union.instancePath));
  const candidates = relevant.length > 0 ? relevant : branches;
  if (candidates.length > 1) {
    const merged = mergedBranches(union, candidates);
    if (merged) return [merged];
  }
  return candidates.reduce((best, branch) => (branch.length < best.length ? branch : best));
}

/** Replaces each union's errors by those of the branch that matters, innermost unions first. */
function collapseUnions(errors: ErrorObject[]): Item[] {
  let items: Item[] = errors.map((error) => ({ error }));
  const unions = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  unions.sort((left, right) => right.schemaPath.length - left.schemaPath.length);
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const involved = (item: Item) => item.error === union || within(item.error, union, prefix);
    const kept = chooseBranch(union, items);
    const first = items.findIndex(involved);
    const rest = items.filter((item) => !involved(item));
    items = [...rest.slice(0, first), ...kept, ...rest.slice(first)];
  }
  return items;
}

/**
 * The condition of an if/then whose `if` tests constant properties (`{type: {const: 'open_url'}}`),
 * in words: "type is open_url".
 */
function conditionOf(error: ErrorObject): string | undefined {
  const condition = (schemaOf(error).if ?? {}) as { properties?: Record<string, { const?: unknown }> };
  const entries = Object.entries(condition.properties ?? {}).filter(([, schema]) => schema.const !== undefined);
  if (entries.length === 0) return undefined;
  return entries.map(([name, schema]) => `${name} is ${quote(schema.const)}`).join(' and ');
}

/**
 * ajv's errors of one value as field errors, one per field (the first found), in ajv's order;
 * each path is prefixed with `at`, the pointer of the value in a larger document.
 */
export function describeSchemaErrors(errors: readonly ErrorObject[], at = ''): FieldError[] {
  const conditions = errors.filter((error) => error.keyword === 'if');
  const byPath = new Map<string, FieldError>();
  for (const { error, message } of collapseUnions(errors.filter((error) => error.keyword !== 'if'))) {
    const path = `${at}${pointerOf(error)}`;
    if (byPath.has(path)) continue;
    // An error under an if/then's `then` says when the rule applies.
    const rule = conditions.find((condition) => within(error, condition, `${condition.schemaPath.replace(/\/if$/, '')}/then/`));
    const when = rule && conditionOf(rule);
    byPath.set(path, { path, message: `${message ?? predicateOf(error)}${when ? ` when ${when}` : ''}` });
  }
  return [...byPath.values()];
}

/** Line and column (from 1) of a position in a text. */
function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/**
 * Why a request body (or a multipart part, the `subject`) is not JSON, from the parser's own
 * error, in one sentence: "The request body is not valid JSON: unterminated string at position
 * 22 (line 1, column 23)."
 */
export function malformedJsonMessage(text: string, subject = 'The request body'): string {
  if (text.trim() === '') {
    return subject === 'The request body'
      ? 'The request body is empty, but its Content-Type says application/json: send a JSON value, or no Content-Type header.'
      : `${subject} is empty; it must be JSON.`;
  }
  let reason: string;
  try {
    JSON.parse(text);
    // Valid JSON that the body parser refused: it sets an object's prototype.
    return `${subject} has a "__proto__" or "constructor.prototype" key, which is not accepted.`;
  } catch (error) {
    reason = (error as Error).message;
  }
  const located = /^(.*?)(?: in JSON)? at position (\d+)/.exec(reason);
  const token = /^(Unexpected token .*?), (.*) is not valid JSON$/.exec(reason);
  let detail = reason.replace(/ is not valid JSON$/, '');
  if (located) detail = `${located[1]} at position ${located[2]} (${lineAndColumn(text, Number(located[2]))})`;
  else if (token) detail = `${token[1]} near ${token[2]}`;
  else if (reason === 'Unexpected end of JSON input') detail = 'the text ends before the JSON value is complete';
  return `${subject} is not valid JSON: ${detail.charAt(0).toLowerCase()}${detail.slice(1)}.`;
}

/** The 415 for a body of a type the route does not read, saying which ones it does. */
export function unsupportedMediaTypeMessage(contentType: string | undefined, takesMultipart: boolean): string {
  const accepted = takesMultipart ? 'application/json or multipart/form-data' : 'application/json';
  const type = contentType?.split(';', 1)[0]?.trim();
  if (!type) return `The request has a body but no Content-Type header; send ${accepted}.`;
  return `The content type ${type} is not supported here; send ${accepted}.`;
}
