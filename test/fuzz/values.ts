/**
 * Hostile JSON values, and bodies derived from a route's JSON Schema: `filler` builds a value that
 * roughly fits a schema (so that other parts of the request get checked), `broken` one that
 * certainly does not, and says which rule it breaks.
 */
import fc from 'fast-check';
import { Deep, RawJson, Ref } from './json-text.ts';
import type { JsonSchema, ResourceKind } from './operations.ts';

/** A value that breaks a rule, and the rule (a JSON pointer and what is wrong there). */
export type Broken = { rule: string; value: unknown };

/** Strings that are valid JSON and valid UTF-16 hazards, but no NUL (NUL is a rule of its own). */
export const oddStrings: readonly string[] = [
  '',
  ' ',
  'é',
  '\ud800',
  'a\udfffb',
  '\ud83d\ude00',
  '\ud83c\udff3\ufe0f\u200d\ud83c\udf08',
  '\u202eevil\u202c',
  '\u0645\u0631\u062d\u0628\u0627',
  '\u200b\ufeff\u2028\u2029',
  'e\u0301'.repeat(50),
  '\uffff\ufffe',
  '\u0001\u0007\u001b\u007f',
  "' OR 1=1 --",
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '%00%zz%E0%A4%A',
  '${jndi:ldap://x}',
  'null',
  'x'.repeat(5000),
];

/** Strings holding NUL, which no PostgreSQL text or jsonb value can store. */
export const nulStrings: readonly string[] = ['\u0000', 'a\u0000b', `${'x'.repeat(40)}\u0000`, '\u0000\ud800'];

/** Number literals JavaScript cannot keep as written: huge, negative zero, beyond float range. */
export const oddNumbers: readonly string[] = [
  '1e400',
  '-1e400',
  '1e20',
  '99999999999999999999',
  '-99999999999999999999',
  '-0',
  '1.5',
  '-1',
  '0',
  '1e-400',
  '4294967296',
  '9007199254740993',
  '-9223372036854775809',
  '0.1e1',
];

/** A string from the odd ones, or a long run of one of them (very long strings). */
export function oddString(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...oddStrings) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((text) => text.replaceAll('\u0000', '')) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', '\u00e9', '\ud83d\ude00', '\u202e'), fc.integer({ min: 1000, max: 100_000 })).map(([unit, count]) => unit.repeat(count)) },
  );
}

/** An odd JSON number written as text. */
export function oddNumber(): fc.Arbitrary<RawJson> {
  return fc.constantFrom(...oddNumbers).map((text) => new RawJson(text));
}

/** Nesting 5,000 or 100,000 levels deep (about 25 KB and 500 KB of JSON), objects or arrays. */
export function deepValue(): fc.Arbitrary<Deep> {
  return fc
    .tuple(fc.constantFrom(5_000, 100_000), fc.constantFrom('object' as const, 'array' as const), fc.constantFrom<unknown>(1, null, '\ud800', []))
    .map(([depth, shape, leaf]) => new Deep(depth, shape, leaf));
}

/** Any JSON value, odd ones favoured, without NUL. */
export function anyValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    oddString(),
    oddNumber(),
    fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }),
    fc.jsonValue({ maxDepth: 3 }).filter((value) => !JSON.stringify(value).includes('\\u0000')),
  );
}

/** A free-form object (metadata): unicode keys, odd values, many keys, deep nesting, or an array instead. */
export function freeObject(): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...oddStrings, 'source', 'constructor', 'toString', '__proto__'), anyValue(), { maxKeys: 5 }) },
    { weight: 2, arbitrary: deepValue().map((deep) => ({ nested: deep })) },
    { weight: 1, arbitrary: fc.integer({ min: 500, max: 3000 }).map((count) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, index]))) },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

function typesOf(schema: JsonSchema): string[] | undefined {
  if (schema.type) return Array.isArray(schema.type) ? schema.type : [schema.type];
  const branches = schema.anyOf ?? schema.oneOf;
  if (!branches) return schema.enum ? ['string'] : undefined;
  const types = branches.map(typesOf);
  return types.every((list) => list !== undefined) ? [...new Set(types.flat() as string[])] : undefined;
}

const sampleOfType: Record<string, unknown[]> = {
  string: ['x', '1', 'true', 'null', '\ud800', '[]'],
  number: [new RawJson('1e400'), new RawJson('-0'), new RawJson('99999999999999999999'), 1.5, 0],
  integer: [new RawJson('1e400'), new RawJson('-0'), 7],
  boolean: [true, false],
  null: [null],
  array: [[], ['x'], [{}], [[[]]]],
  object: [{}, { a: 1 }, { '': null }],
};

/** A JSON value of a type `schema` does not allow (undefined when it allows any type). */
function wrongType(schema: JsonSchema): fc.Arbitrary<unknown> | undefined {
  const allowed = typesOf(schema);
  if (!allowed) return undefined;
  // An integer is a number, and JSON Schema's `number` accepts integers.
  const excluded = new Set(allowed.flatMap((type) => (type === 'number' ? ['number', 'integer'] : type === 'integer' ? ['integer'] : [type])));
  if (excluded.has('integer')) excluded.add('number');
  const candidates = Object.entries(sampleOfType)
    .filter(([type]) => !excluded.has(type))
    .flatMap(([, values]) => values);
  return candidates.length === 0 ? undefined : fc.constantFrom(...candidates);
}

/** Body properties whose value names a fixture resource, and which resource. */
const referenceNames: Record<string, ResourceKind> = {
  experienceId: 'experience',
  knowledgeBaseId: 'knowledgeBase',
  knowledgeBaseIds: 'knowledgeBase',
  sessionId: 'session',
};

/** A value that roughly fits `schema` (it may break it), with odd content; `name` is the property's. */
export function filler(schema: JsonSchema, name = '', depth = 0): fc.Arbitrary<unknown> {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && branches.length > 0) return fc.oneof(...branches.map((branch) => filler({ ...schema, anyOf: undefined, oneOf: undefined, ...branch }, name, depth)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const types = typesOf(schema) ?? ['object'];
  return fc.oneof(...types.map((type) => fillerOfType(schema, type, name, depth)));
}

function fillerOfType(schema: JsonSchema, type: string, name: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? -1_000_000;
      const max = schema.maximum ?? 1_000_000;
      const inRange = oddNumbers.filter((text) => Number(text) >= min && Number(text) <= max && (type === 'number' || Number.isInteger(Number(text))));
      return fc.oneof(fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), ...(inRange.length > 0 ? [fc.constantFrom(...inRange).map((text) => new RawJson(text))] : []));
    }
    case 'string':
      return stringFiller(schema, name);
    case 'array': {
      const items = schema.items ?? {};
      const reference = referenceNames[name];
      if (reference) return fc.constant([new Ref(reference)]);
      return fc.array(depth > 6 ? anyValue() : filler(items, '', depth + 1), { maxLength: Math.min(3, schema.maxItems ?? 3) });
    }
    default:
      return objectFiller(schema, depth);
  }
}

function stringFiller(schema: JsonSchema, name: string): fc.Arbitrary<unknown> {
  if (schema.format === 'uuid') {
    const reference = referenceNames[name];
    return reference ? fc.constant(new Ref(reference)) : fc.uuid();
  }
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
  if (schema.format === 'uri') return fc.constantFrom('https://example.com/', 'https://\u00e9.example/\ud83d\ude00', 'http://127.0.0.1:1/');
  const max = schema.maxLength ?? 100_000;
  const min = schema.minLength ?? 0;
  return fc.oneof(oddString(), fc.constantFrom('fuzz', 'fuzz@example.com')).filter((text) => text.length >= min && text.length <= max);
}

function objectFiller(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const properties = schema.properties;
  if (!properties || Object.keys(properties).length === 0) return depth > 6 ? fc.constant({}) : freeObject();
  const required = new Set(schema.required ?? []);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, property] of Object.entries(properties)) model[key] = filler(property, key, depth + 1);
  return fc.record(model, { requiredKeys: [...required] });
}

/** A value that `schema` refuses for certain (or that no PostgreSQL column can hold), with the rule it breaks. */
export function broken(schema: JsonSchema, pointer = '', name = '', depth = 0): fc.Arbitrary<Broken> {
  const options: fc.Arbitrary<Broken>[] = [];
  const at = pointer || '/';
  const wrong = wrongType(schema);
  if (wrong) options.push(wrong.map((value) => ({ rule: `${at} wrong type`, value })));
  const types = typesOf(schema) ?? [];
  if (types.includes('string') && !types.includes('number')) {
    options.push(fc.constantFrom(...nulStrings).map((value) => ({ rule: `${at} holds NUL`, value })));
    if (schema.maxLength !== undefined) {
      const limit = schema.maxLength;
      options.push(fc.integer({ min: limit + 1, max: limit + 2000 }).map((length) => ({ rule: `${at} longer than ${limit}`, value: '\u00e9'.repeat(length) })));
    }
    if (schema.minLength) options.push(fc.constant({ rule: `${at} shorter than ${schema.minLength}`, value: '' }));
    if (schema.enum) {
      const outside = ['PENDING', 'all', '*', 'up ', 'query:execute '].filter((value) => !schema.enum!.includes(value));
      options.push(fc.constantFrom(...outside).map((value) => ({ rule: `${at} not in enum`, value })));
    }
    if (schema.format === 'uuid') {
      options.push(fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-00000000000g', `${'0'.repeat(36)}\ud800`, "1' OR '1'='1").map((value) => ({ rule: `${at} not a UUID`, value })));
      const reference = referenceNames[name];
      if (reference) options.push(fc.uuid().map((value) => ({ rule: `${at} names no ${reference}`, value })));
    }
    // The last three are valid RFC 3339 that PostgreSQL cannot store (no year 0, offsets below 16 h).
    const badDates = ['yesterday', '2024-13-45T25:61:61Z', '1e20', '0000-01-01T00:00:00Z', '2024-01-01T00:00:00+23:59', '9999-12-31T23:59:59-18:00'];
    if (schema.format === 'date-time') options.push(fc.constantFrom(...badDates).map((value) => ({ rule: `${at} not a date-time`, value })));
  }
  if (types.includes('integer') || types.includes('number')) {
    if (types.includes('integer') && !types.includes('number')) options.push(fc.constantFrom('1.5', '0.000001').map((text) => ({ rule: `${at} not an integer`, value: new RawJson(text) })));
    if (schema.maximum !== undefined) options.push(fc.constantFrom('1e400', '99999999999999999999', String(schema.maximum + 1)).map((text) => ({ rule: `${at} above ${schema.maximum}`, value: new RawJson(text) })));
    if (schema.minimum !== undefined) options.push(fc.constantFrom('-1e400', '-99999999999999999999', String(schema.minimum - 1)).map((text) => ({ rule: `${at} below ${schema.minimum}`, value: new RawJson(text) })));
  }
  if (types.includes('array') && schema.items && depth < 3) {
    const item = broken(schema.items, `${pointer}/0`, name, depth + 1);
    options.push(item.map(({ rule, value }) => ({ rule, value: [value] })));
    if (schema.minItems) options.push(fc.constant({ rule: `${at} has fewer than ${schema.minItems} items`, value: [] }));
  }
  if (types.includes('object') || (!schema.type && schema.properties)) options.push(...brokenObject(schema, pointer, depth));
  return options.length > 0 ? fc.oneof(...options) : fc.constant({ rule: `${at} holds NUL`, value: '\u0000' });
}

function brokenObject(schema: JsonSchema, pointer: string, depth: number): fc.Arbitrary<Broken>[] {
  const at = pointer || '/';
  const properties = schema.properties ?? {};
  const keys = Object.keys(properties);
  const base = objectFiller(schema, depth) as fc.Arbitrary<Record<string, unknown>>;
  const options: fc.Arbitrary<Broken>[] = [];
  // A NUL in a key of a free-form object: valid JSON, but not storable.
  options.push(fc.tuple(base, fc.constantFrom(...nulStrings)).map(([value, key]) => ({ rule: `${at} has a key holding NUL`, value: { ...asObject(value), [key]: 1 } })));
  if (keys.length === 0) return options;
  // A required property with a default is filled in by the validator (ajv useDefaults): not a rule.
  for (const key of (schema.required ?? []).filter((name) => properties[name]?.default === undefined)) {
    options.push(base.map((value) => ({ rule: `${pointer}/${key} missing`, value: withoutKey(asObject(value), key) })));
  }
  if (schema.additionalProperties === false) {
    const extraKey = fc.constantFrom('extra', '__proto__', 'constructor', '\ud800', '\u202e', 'x'.repeat(300)).filter((key) => !keys.includes(key));
    options.push(fc.tuple(base, extraKey, anyValue()).map(([value, key, extra]) => ({ rule: `${pointer}/${key} not allowed`, value: { ...asObject(value), [key]: extra } })));
  }
  if (schema.minProperties) options.push(fc.constant({ rule: `${at} has no properties`, value: {} }));
  if (depth < 3) {
    const property = fc.constantFrom(...keys).chain((key) =>
      fc.tuple(base, broken(properties[key]!, `${pointer}/${key}`, key, depth + 1)).map(([value, bad]) => ({ rule: bad.rule, value: { ...asObject(value), [key]: bad.value } })),
    );
    // Breaking one property while the others roughly fit is what reaches deepest: weigh it up.
    options.push(property, property, property);
  }
  return options;
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function withoutKey(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _removed, ...rest } = value;
  return rest;
}
