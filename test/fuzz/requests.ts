/**
 * fast-check arbitraries of hostile HTTP requests, one family per operation of the OpenAPI
 * document. Every request breaks at least one rule (listed in `rules`), so that none of them may
 * change the fixture: a bad token, a path id that is no UUID or names nothing of the caller's,
 * a body the schema refuses or that holds NUL, a wrong content type, broken framing, too large a
 * body. Read-only GETs may also go out with noise alone (odd headers, unknown parameters).
 * Requests are data (fixture ids are `Ref`s), so a seed replays them on a fresh server.
 */
import fc from 'fast-check';
import { Ref } from './json-text.ts';
import type { JsonSchema, Operation, Parameter } from './operations.ts';
import { refusedToken, type TokenSpec } from './tokens.ts';
import { broken, filler } from './values.ts';

/** A piece of a request target: bytes as a latin1 string, or a fixture id. */
export type TargetPart = string | Ref;

/** How the body is delimited on the wire; all but `length` and `chunked` are framing errors. */
export type Framing = 'length' | 'chunked' | 'ends-early' | 'length-short' | 'duplicate-length' | 'length-and-chunked' | 'bad-chunk';

/** One part of a multipart form; `filename` makes it a file part. */
export type FormPart = { name: string; value: unknown; filename?: string };

/** What a request carries as its body. */
export type BodySpec =
  /** JSON text of `value` (markers written out). */
  | { kind: 'json'; value: unknown; contentType: string }
  /** Text sent as UTF-8 as is. */
  | { kind: 'text'; text: string; contentType: string | undefined }
  /** A multipart form; `boundary: undefined` leaves it out of the content type; `cut` drops the body's tail. */
  | { kind: 'form'; parts: FormPart[]; boundary: string | undefined; cut: 'none' | 'closing' | 'half' | 'all' }
  /** `{"padding":"xxx..."}` of about `bytes` bytes (over a body limit). */
  | { kind: 'padded'; bytes: number; contentType: string };

/** A generated request, before fixture ids and tokens are filled in. */
export type FuzzRequest = {
  /** `METHOD /route` of the operation it was generated for. */
  operation: string;
  /** The rules it breaks; empty for a read-only request with noise only. */
  rules: string[];
  method: string;
  path: TargetPart[];
  /** The query string without `?`, empty for none. */
  query: TargetPart[];
  token: TokenSpec;
  /** Extra headers as latin1 strings (they may hold bytes fetch refuses to send). */
  headers: [string, string][];
  /** Leaves the Host header out. */
  noHost?: boolean;
  /** Set when the request is not valid HTTP/1.1 (the server may close without reading it all). */
  malformedHttp?: boolean;
  body?: BodySpec;
  framing: Framing;
};

/** The body limits of the server under test, in bytes. */
export type BodyLimits = { defaultJson: number; ingestionJson: number; multipart: number };

/** What the generators know of the server and of the other operations. */
export type GeneratorOptions = { limits: BodyLimits; operations: Operation[] };

type Piece = Partial<Omit<FuzzRequest, 'operation' | 'rules'>> & { rule: string };

const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/** Path parameter values that are no UUID, as raw target text (percent-encodings left as they are). */
const hostilePathValues: readonly string[] = [
  'not-a-uuid',
  '%00',
  'a%00b',
  '%E0%A4%A',
  '%zz',
  '%',
  '..',
  '%2e%2e',
  '.',
  '%2F',
  'x'.repeat(101),
  'x'.repeat(3000),
  utf8Bytes('\u00e9\u202e\ud83d\ude00'),
  '%C3%A9',
  '%F0%9F%98%80',
  '%ED%A0%80',
  '%FF',
  "1'%20OR%20'1'='1",
  '00000000-0000-0000-0000-00000000000G',
  '00000000-0000-0000-0000-000000000000%00',
  '%7Bid%7D',
  '-1',
  'null',
];

const hostileQueryValues = {
  integer: ['Infinity', '-Infinity', 'NaN', '1e20', '99999999999999999999', '-1', '1.5', '0x10', '', 'abc', '%00', '1%00', '1e400', '-0', '%20', '1,2', '9223372036854775808'],
  boolean: ['yes', '2', '', 'null', 'truee', '%00', 'TRUE', '1.0'],
  date: ['not-a-date', '2024-13-45', '0000-00-00', '99999-01-01', '2024-01-01T25:00:00Z', '1e20', '%00', '294277-01-01', '2024-02-30', '-infinity', 'infinity', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z', '0000-01-01', '0000-01-01T00:00:00Z', '2024-01-01T00:00:00%2B23:59', '2024-01-01T00:00:00-16:00'],
  enum: ['PENDING', 'all', '%00', '', '%E2%80%AE'],
  uuid: ['not-a-uuid', '%00', 'x'.repeat(200), '%zz'],
  string: ['%00', 'a%00b', '%zz', '%E0%A4%A', 'x'.repeat(5000), '%F0%9F%98%80', "'%20OR%201=1--", '%5C', '%25', '%ED%A0%80', 'a%20b', ''],
} as const;

const unknownQuery: readonly string[] = ['foo=bar', '__proto__=x', 'constructor[prototype][x]=1', 'a[]=1&a[]=2', '%00=%00', '&&&', '=', 'x'.repeat(2000) + '=1'];

/** Headers that change nothing about validity but are odd: origins, accepts, ids, encodings. */
function noiseHeaders(): fc.Arbitrary<[string, string][]> {
  const header = fc.oneof(
    fc
      .constantFrom('null', 'https://evil.example', 'http://localhost:1', 'https://a.example.com.evil.com', '*', '', 'file://', 'https://exa mple.com', utf8Bytes('https://\u00e9.example'), `https://${'a'.repeat(5000)}.com`)
      .map((value): [string, string] => ['origin', value]),
    fc.constantFrom('text/event-stream', '*/*', 'application/xml', 'text/html;q=0.1, */*;q=0', '').map((value): [string, string] => ['accept', value]),
    fc.constantFrom('1.2.3.4, 5.6.7.8', 'not-an-ip', '::1', '').map((value): [string, string] => ['x-forwarded-for', value]),
    fc.constantFrom('x'.repeat(1000), '', 'abc', utf8Bytes('\u00e9')).map((value): [string, string] => ['x-request-id', value]),
    fc.constantFrom('gzip, br, deflate', 'identity;q=0', 'x').map((value): [string, string] => ['accept-encoding', value]),
    fc.constantFrom('a=b', '=; ;', 'x'.repeat(3000)).map((value): [string, string] => ['cookie', value]),
  );
  return fc.array(header, { maxLength: 3 });
}

function templateParts(operation: Operation, values: Record<string, TargetPart>): TargetPart[] {
  const parts: TargetPart[] = [];
  for (const piece of operation.path.split(/(\{[^}]+\})/)) {
    if (piece === '') continue;
    const name = /^\{(.+)\}$/.exec(piece)?.[1];
    parts.push(name ? (values[name] ?? 'missing') : piece);
  }
  return parts;
}

function validToken(operation: Operation): TokenSpec {
  if (operation.auth === 'admin') return { kind: 'admin' };
  if (operation.auth === 'bearer') return { kind: 'own' };
  return operation.auth === 'optional' ? { kind: 'own' } : { kind: 'none' };
}

function ownPath(operation: Operation): TargetPart[] {
  return templateParts(operation, Object.fromEntries(operation.pathParams.map((param) => [param.name, new Ref(param.resource ?? 'session')])));
}

/** A body schema, with the ingestion route's `data` given the generic-json adapter's record shape. */
function bodySchemaOf(operation: Operation): JsonSchema | undefined {
  if (!operation.body || operation.path !== '/api/v2/data-ingestion/jobs') return operation.body;
  return { ...operation.body, properties: { ...operation.body.properties, adapterType: { type: 'string', enum: ['generic-json'] }, data: genericJsonData } };
}

/** The generic-json adapter's payload (src/features/ingestion/adapters/generic-json.ts), a few records. */
const genericJsonData: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['records'],
  properties: {
    records: {
      type: 'array',
      maxItems: 3,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'content'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: 512 },
          title: { type: 'string', maxLength: 1000 },
          content: { type: 'string', minLength: 1, maxLength: 1_000_000 },
          contentType: { type: 'string', enum: ['text', 'markdown', 'code', 'qa_pair'] },
          metadata: { type: 'object' },
          // Never true: a deletion needs no content, which would make "content missing" valid.
          deleted: { type: 'boolean', enum: [false] },
          url: { type: 'string', format: 'uri', maxLength: 2048 },
          tags: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 200 } },
        },
      },
    },
  },
};

function hostileQuery(param: Parameter): readonly string[] {
  const schema = param.schema;
  if (schema.type === 'integer' || schema.type === 'number') return hostileQueryValues.integer;
  if (schema.type === 'boolean') return hostileQueryValues.boolean;
  if (schema.enum) return hostileQueryValues.enum;
  if (schema.format === 'uuid') return hostileQueryValues.uuid;
  if (schema.anyOf?.some((branch) => branch.format?.startsWith('date'))) return hostileQueryValues.date;
  return hostileQueryValues.string;
}

const bodyMethods = new Set(['POST', 'PATCH', 'PUT']);

/** Every piece that makes a request of `operation` invalid, as arbitraries. */
function breakers(operation: Operation, options: GeneratorOptions): fc.Arbitrary<Piece> {
  const pieces: { weight: number; arbitrary: fc.Arbitrary<Piece> }[] = [];
  const add = (weight: number, arbitrary: fc.Arbitrary<Piece>) => pieces.push({ weight, arbitrary });
  const schema = bodySchemaOf(operation);
  const carriesBody = bodyMethods.has(operation.method);

  if (operation.auth === 'bearer' || operation.auth === 'admin' || operation.auth === 'optional') {
    const refused = refusedToken().filter(({ token }) => operation.auth !== 'optional' || token.kind !== 'none');
    add(3, refused.map(({ rule, token }) => ({ rule: `auth: ${rule}`, token })));
    if (operation.auth === 'bearer') add(1, fc.constant({ rule: 'auth: token lacks the scope', token: { kind: 'lowScope' as const } }));
    if (operation.auth === 'admin') add(1, fc.constant({ rule: 'auth: workspace token on an admin route', token: { kind: 'own' as const } }));
  }

  for (const param of operation.pathParams) {
    const values = (text: TargetPart) => templateParts(operation, Object.fromEntries(operation.pathParams.map((other) => [other.name, other === param ? text : new Ref(other.resource ?? 'session')])));
    add(2, fc.constantFrom(...hostilePathValues).map((text) => ({ rule: `path: ${param.name} is not a UUID`, path: values(text) })));
    add(1, fc.uuid().map((uuid) => ({ rule: `path: ${param.name} names nothing`, path: values(uuid) })));
    if (param.resource && param.resource !== 'workspace' && param.resource !== 'query') {
      add(1, fc.constant({ rule: `path: ${param.name} is another workspace's`, path: values(new Ref(param.resource, 'foreign')) }));
    }
  }

  if (operation.query.length > 0) {
    const param = fc.constantFrom(...operation.query);
    add(4, param.chain((query) => fc.constantFrom(...hostileQuery(query)).map((value) => ({ rule: `query: ${query.name}=${value.slice(0, 40)}`, query: [`${query.name}=${value}`] }))));
    add(1, param.map((query) => ({ rule: `query: ${query.name} repeated`, query: [`${query.name}=1&${query.name}=2`] })));
  }

  if (schema && carriesBody) {
    add(10, broken(schema).map(({ rule, value }) => ({ rule: `body: ${rule}`, body: { kind: 'json' as const, value, contentType: 'application/json' } })));
    add(1, fc.constant({ rule: 'body: none', body: undefined }));
    add(
      1,
      fc.constantFrom('hello', '{"name":"x"}', '').map((text) => ({ rule: 'body: text/plain', body: { kind: 'text' as const, text, contentType: 'text/plain' } })),
    );
    if (!operation.multipart) {
      add(1, fc.constantFrom<string | undefined>(undefined, 'x').map((boundary) => ({ rule: 'body: multipart where JSON is expected', body: { kind: 'form' as const, parts: [{ name: 'name', value: 'x' }], boundary, cut: 'none' as const } })));
    }
    if (schema.additionalProperties === false) {
      add(1, filler(schema).map((value) => ({ rule: 'body: urlencoded with an unknown field', body: { kind: 'text' as const, text: urlencoded({ ...asRecord(value), zz: 1 }), contentType: 'application/x-www-form-urlencoded' } })));
    }
    add(1, filler(schema).map((value) => ({ rule: 'framing: Content-Length shorter than the body', body: json(value), framing: 'length-short' as const, malformedHttp: true })));
  }
  if (carriesBody) {
    const malformed = ['{', '{"a":}', "{'a':1}", '[1,]', 'nul', '{"a":1}x', '"\\x41"', '{"a":01}', 'NaN', '{"a":1e}', '{"a":"b\u0000"}', '\u0000', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'];
    add(2, fc.constantFrom(...malformed).map((text) => ({ rule: 'body: malformed JSON', body: { kind: 'text' as const, text, contentType: 'application/json' } })));
    add(1, fc.constant({ rule: 'body: empty with a JSON content type', body: { kind: 'text' as const, text: '', contentType: 'application/json' } }));
    add(
      2,
      fc
        .constantFrom('application/xml', 'text/html', 'image/png', 'application/x-yaml', 'application/octet-stream', 'application/jsonx', 'json')
        .map((contentType) => ({ rule: `body: unsupported content type ${contentType}`, body: { kind: 'text' as const, text: '<a>1</a>', contentType } })),
    );
    const limit = operation.multipart ? options.limits.ingestionJson : options.limits.defaultJson;
    add(
      1,
      fc.tuple(fc.integer({ min: limit + 1, max: limit + 3 * 1024 * 1024 }), fc.constantFrom<Framing>('length', 'chunked')).map(([bytes, framing]) => ({
        rule: `body: over the ${limit}-byte limit`,
        body: { kind: 'padded' as const, bytes, contentType: 'application/json' },
        framing,
      })),
    );
    const someBody = schema ? filler(schema).map(json) : fc.constant(json({ x: 1 }));
    add(
      2,
      fc.tuple(someBody, fc.constantFrom<Framing>('ends-early', 'duplicate-length', 'length-and-chunked', 'bad-chunk')).map(([body, framing]) => ({ rule: `framing: ${framing}`, body, framing, malformedHttp: true })),
    );
  }
  if (operation.multipart) pieces.push(...multipartBreakers(operation, options).map(({ weight, arbitrary }) => ({ weight: weight * 2, arbitrary })));

  // Transport: what no route may accept, whatever the operation; one share of the whole, as
  // these stop at the HTTP parser or the router and never reach a handler.
  const transport: fc.Arbitrary<Piece>[] = [];
  transport.push(fc.constantFrom('a\u0000b', '\u0000', 'a\u0001b', '\u007f', 'a\u001bb').map((value) => ({ rule: 'header: control byte in a value', malformedHttp: true, headers: [['x-fuzz', value]] as [string, string][] })));
  transport.push(fc.constantFrom('\u0000', '\u0001').map((byte) => ({ rule: 'header: control byte in Authorization', malformedHttp: true, token: { kind: 'raw' as const, value: `Bearer a${byte}b` } })));
  transport.push(
    fc.constantFrom('authorization', 'cookie', 'x-fuzz').map((name) => ({
      rule: `header: 100 KB ${name}`,
      malformedHttp: true,
      ...(name === 'authorization' ? { token: { kind: 'raw' as const, value: `Bearer ${'a'.repeat(100_000)}` } } : { headers: [[name, 'a'.repeat(100_000)]] as [string, string][] }),
    })),
  );
  transport.push(fc.constantFrom('\u0000', '\u0001', ' ', '\u007f', '\t', '\u00ff', '\r').map((byte) => ({ rule: `path: raw byte ${JSON.stringify(byte)}`, malformedHttp: true, path: [...ownPath(operation), byte, 'x'] })));
  transport.push(fc.constantFrom('%zz', '%E0%A4%A', '%', '%%', '%0', '%C0%AF').map((text) => ({ rule: `path: bad percent-encoding ${text}`, path: [...ownPath(operation), text] })));
  // Dot segments and extra slashes only miss the route while the router does not normalize them
  // (Fastify's ignoreTrailingSlash, ignoreDuplicateSlashes): a request that changes state gets
  // a segment that can never name a route instead.
  const appended = operation.mutates ? ['/x', '/%2F', '/%00'] : ['/..', '/../..', '/.', '//', '/', '/%2e%2e', '/%2F'];
  transport.push(fc.constantFrom(...appended).map((text) => ({ rule: `path: ${text} appended`, path: [...ownPath(operation), text] })));
  transport.push(fc.integer({ min: 9_000, max: 70_000 }).map((length) => ({ rule: `path: ${length} characters`, malformedHttp: true, path: [...ownPath(operation), '/', 'a'.repeat(length)] })));
  const others = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => !options.operations.some((other) => other.path === operation.path && other.method === method));
  if (others.length > 0) transport.push(fc.constantFrom(...others).map((method) => ({ rule: `method: ${method} has no route`, method })));
  transport.push(fc.constantFrom('FOO', 'PURGE', 'PROPFIND', 'BREW', 'get').map((method) => ({ rule: `method: ${method}`, method, malformedHttp: !['PURGE', 'PROPFIND'].includes(method) })));
  transport.push(fc.constant({ rule: 'header: no Host', noHost: true, malformedHttp: true }));
  add(4, fc.oneof(...transport));
  return fc.oneof(...pieces);
}

/** Multipart submissions of the ingestion route that must fail: framing, missing or bad fields, limits. */
function multipartBreakers(operation: Operation, options: GeneratorOptions): { weight: number; arbitrary: fc.Arbitrary<Piece> }[] {
  const data = filler(genericJsonData);
  const field = (name: string, value: unknown, asFile: boolean): FormPart => (asFile ? { name, value, filename: 'data.json' } : { name, value });
  // `boundary: null` leaves the boundary out (undefined would take the default).
  const form = (rule: string, parts: fc.Arbitrary<FormPart[]>, boundary: string | null = 'fuzzboundary', cut: 'none' | 'closing' | 'half' | 'all' = 'none') =>
    parts.map((list) => ({ rule: `multipart: ${rule}`, body: { kind: 'form' as const, parts: list, boundary: boundary ?? undefined, cut } }));
  const valid = fc.tuple(data, fc.boolean()).map(([value, asFile]) => [
    { name: 'adapterType', value: 'generic-json' },
    { name: 'knowledgeBaseId', value: new Ref('knowledgeBase') },
    field('data', value, asFile),
  ]);
  const without = (name: string) => valid.map((parts) => parts.filter((part) => part.name !== name));
  const replaced = (name: string, values: fc.Arbitrary<unknown>) => fc.tuple(valid, values).map(([parts, value]) => parts.map((part) => (part.name === name ? { ...part, value } : part)));
  const limit = options.limits.multipart;
  return [
    { weight: 2, arbitrary: form('no boundary', valid, null) },
    { weight: 2, arbitrary: fc.constantFrom<'closing' | 'half' | 'all'>('closing', 'half', 'all').chain((cut) => form(`body cut (${cut})`, valid, 'x', cut)) },
    { weight: 1, arbitrary: fc.constantFrom('adapterType', 'knowledgeBaseId', 'data').chain((name) => form(`${name} missing`, without(name))) },
    { weight: 1, arbitrary: form('knowledgeBaseId names nothing', replaced('knowledgeBaseId', fc.oneof(fc.uuid(), fc.constantFrom('not-a-uuid', '%00', '\u0000')))) },
    { weight: 1, arbitrary: form('unknown adapterType', replaced('adapterType', fc.constantFrom('nope', '', '\u0000', 'generic-json\u0000'))) },
    { weight: 1, arbitrary: form('data is not JSON', replaced('data', fc.constantFrom('{', 'not json', '\u0000', '', '\ud800'))) },
    // NUL in ingested data is repaired, not refused (docs/decisions.md, 93): not a breaking rule here.
    { weight: 1, arbitrary: broken(genericJsonData).filter(({ rule }) => !rule.includes('NUL')).chain(({ rule, value }) => form(`data ${rule}`, replaced('data', fc.constant(value)))) },
    { weight: 1, arbitrary: form('too many parts', valid.map((parts) => [...parts, ...Array.from({ length: 20 }, (_, index) => ({ name: `f${index}`, value: 'x' }))])) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: limit + 1, max: limit + 2 * 1024 * 1024 }).chain((bytes) =>
        form(`file over the ${limit}-byte limit`, valid.map((parts) => parts.map((part) => (part.name === 'data' ? { ...part, filename: 'big.json', value: 'x'.repeat(bytes) } : part)))),
      ),
    },
    { weight: 1, arbitrary: form('second file part', valid.map((parts) => [...parts, { name: 'data2', value: '{}', filename: 'b.json' }, { name: 'adapterType', value: 'nope' }])) },
  ];
}

function json(value: unknown): BodySpec & { kind: 'json' } {
  return { kind: 'json', value, contentType: 'application/json' };
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Percent-encodes UTF-8 bytes; unlike encodeURIComponent it takes lone surrogates (as U+FFFD). */
function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

function urlencoded(fields: Record<string, unknown>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${percentEncoded(key)}=${percentEncoded(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))}`)
    .join('&');
}

/** The parts a request of `operation` has when nothing is wrong with it (bodies still odd). */
function baseline(operation: Operation): fc.Arbitrary<Omit<FuzzRequest, 'rules'>> {
  const schema = bodySchemaOf(operation);
  const body: fc.Arbitrary<BodySpec | undefined> = schema && bodyMethods.has(operation.method) ? filler(schema).map(json) : fc.constant(undefined);
  return fc.record({
    operation: fc.constant(`${operation.method} ${operation.path}`),
    method: fc.constant(operation.method),
    path: fc.constant(ownPath(operation)),
    query: fc.oneof({ weight: 4, arbitrary: fc.constant([] as TargetPart[]) }, { weight: 1, arbitrary: fc.constantFrom(...unknownQuery).map((text) => [text]) }),
    token: fc.constant(validToken(operation)),
    headers: noiseHeaders(),
    body,
    framing: fc.constantFrom<Framing>('length', 'length', 'length', 'chunked'),
  });
}

/** Requests of one operation, each breaking at least one rule (read-only GETs: possibly none). */
export function requestsOf(operation: Operation, options: GeneratorOptions): fc.Arbitrary<FuzzRequest> {
  const broken = fc.tuple(baseline(operation), breakers(operation, options)).map(([base, { rule, ...piece }]): FuzzRequest => {
    // Extra headers of a breaker come after the noise; a `query` replaces the noise's.
    const headers = [...base.headers, ...(piece.headers ?? [])];
    return { ...base, ...piece, headers, rules: [rule] };
  });
  if (operation.mutates) return broken;
  return fc.oneof({ weight: 4, arbitrary: broken }, { weight: 1, arbitrary: baseline(operation).map((base): FuzzRequest => ({ ...base, rules: [] })) });
}

/** Requests of every operation; those that take a body are drawn three times as often (most of their input is there). */
export function fuzzRequests(operations: Operation[], options: GeneratorOptions): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...operations.map((operation) => ({ weight: operation.body ? 3 : 1, arbitrary: requestsOf(operation, options) })));
}
