import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Ajv, type AnySchema } from 'ajv';
import addFormats from 'ajv-formats';
import { Type } from 'typebox';
import { assertExactError } from '../../../test/assert-error.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { ActionSchema } from '../../features/experiences/action.schema.ts';
import { UserIdSchema } from '../../features/sessions/sessions.schemas.ts';
import type { FieldError } from '../errors.ts';
import { Uuid } from './schemas.ts';
import { describeSchemaErrors, fieldName, malformedJsonMessage, summarize, unsupportedMediaTypeMessage, validationError } from './validation-messages.ts';

// The options of the request validator in app.ts that shape its errors.
const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true, strictNumbers: true });
addFormats.default(ajv);

/** The field errors of `value` against `schema`, as a 400 lists them. */
function errorsOf(schema: AnySchema, value: unknown): FieldError[] {
  const validate = ajv.compile(schema);
  assert.equal(validate(value), false, `${JSON.stringify(value)} passed`);
  return describeSchemaErrors(validate.errors ?? []);
}

/** Asserts the one error of a field of `{field: schema}` given `value`, and the body's message for it. */
function assertFieldError(field: object, value: unknown, message: string) {
  const errors = errorsOf(Type.Object({ field }), { field: value });
  assert.deepEqual(errors, [{ path: '/field', message }], JSON.stringify(value));
  assert.equal(summarize(errors), `field ${message}.`);
}

describe('validation messages: one plain message per failing field, keyword by keyword', () => {
  test('required and unknown fields point at the field itself', () => {
    const schema = Type.Object({ text: Type.String(), settings: Type.Optional(Type.Object({ topK: Type.Integer() }, { additionalProperties: false })) }, { additionalProperties: false });
    assert.deepEqual(errorsOf(schema, {}), [{ path: '/text', message: 'is required' }]);
    assert.equal(summarize(errorsOf(schema, {})), 'text is required.');
    const unknown = errorsOf(schema, { text: 'x', foo: 1, settings: { topK: 1, 'colour/shade': 'red' } });
    assert.deepEqual(unknown, [
      { path: '/foo', message: 'is not a known field (known fields: text, settings)' },
      { path: '/settings/colour~1shade', message: 'is not a known field (known fields: topK)' },
    ]);
    assert.equal(summarize(unknown), 'foo is not a known field (known fields: text, settings) (and 1 more problem).');
  });

  test('types, with a union of types in one list', () => {
    assertFieldError(Type.Integer(), 'ten', 'must be an integer');
    assertFieldError(Type.Integer(), 1.5, 'must be an integer');
    assertFieldError(Type.Number(), '1', 'must be a number');
    assertFieldError(Type.Boolean(), 'yes', 'must be a boolean');
    assertFieldError(Type.Array(Type.String()), 'a', 'must be an array');
    assertFieldError(Type.Object({}), [], 'must be an object');
    assertFieldError(Type.Unsafe({ type: ['string', 'null'] }), 42, 'must be a string or null');
    assertFieldError(Uuid, 42, 'must be a UUID');
  });

  test('string lengths: empty, too short, too long', () => {
    assertFieldError(Type.String({ minLength: 1 }), '', 'must not be empty');
    assertFieldError(Type.String({ minLength: 3 }), 'ab', 'must have at least 3 characters (has 2)');
    assertFieldError(Type.String({ maxLength: 200 }), 'x'.repeat(201), 'must have at most 200 characters (has 201)');
    assertFieldError(Type.String({ maxLength: 1 }), 'xy', 'must have at most 1 character (has 2)');
  });

  test('numeric bounds', () => {
    assertFieldError(Type.Integer({ minimum: 1 }), 0, 'must be at least 1');
    assertFieldError(Type.Integer({ maximum: 100 }), 101, 'must be at most 100');
    assertFieldError(Type.Number({ exclusiveMinimum: 0 }), 0, 'must be greater than 0');
    assertFieldError(Type.Number({ exclusiveMaximum: 1 }), 1, 'must be less than 1');
    assertFieldError(Type.Integer({ multipleOf: 5 }), 7, 'must be a multiple of 5');
  });

  test('enum and const', () => {
    assertFieldError(Type.Unsafe({ type: 'string', enum: ['active', 'completed'] }), 'open', 'must be one of: active, completed');
    assertFieldError(Type.Literal('Bearer'), 'bearer', 'must be "Bearer"');
  });

  test('formats', () => {
    assertFieldError(Type.String({ format: 'uuid' }), 'not-a-uuid', 'must be a UUID');
    assertFieldError(Type.String({ format: 'uri' }), 'not a url', 'must be a valid URL');
    assertFieldError(Type.String({ format: 'date-time' }), 'yesterday', 'must be a date and time in ISO 8601 form (such as 2026-01-31T09:30:00Z)');
    assertFieldError(Type.String({ format: 'date' }), '31/01/2026', 'must be a date in ISO 8601 form (such as 2026-01-31)');
    assertFieldError(Type.String({ format: 'email' }), 'ada at example', 'must be an email address');
    assertFieldError(Type.String({ format: 'ipv4' }), '1.2.3', 'must be an IPv4 address');
  });

  test('patterns say what they are for: a known pattern, else the description, else only that the form is wrong', () => {
    assertFieldError(Type.String({ pattern: '\\S' }), '   ', 'must not be blank');
    assertFieldError(Type.String({ pattern: '^https?://' }), 'ftp://x', 'must be an http or https URL');
    assertFieldError(UserIdSchema, 'ada lovelace', 'must not contain whitespace or control characters');
    assertFieldError(Type.String({ pattern: '^[A-Z]{3}$', description: 'An ISO 4217 currency code, such as EUR.' }), 'euro', 'does not have the expected form: An ISO 4217 currency code, such as EUR');
    assertFieldError(Type.String({ pattern: '^[A-Z]{3}$' }), 'euro', 'has an invalid format');
  });

  test('arrays and objects: item counts, repeats, fields', () => {
    assertFieldError(Type.Array(Type.String(), { minItems: 1 }), [], 'must have at least 1 item (has 0)');
    assertFieldError(Type.Array(Type.String(), { maxItems: 4 }), ['a', 'b', 'c', 'd', 'e'], 'must have at most 4 items (has 5)');
    assertFieldError(Type.Array(Type.String(), { uniqueItems: true }), ['a', 'b', 'a'], 'must not repeat an item (items 0 and 2 are the same)');
    assertFieldError(Type.Object({ a: Type.Optional(Type.String()) }, { minProperties: 1 }), {}, 'must set at least one field');
    assertFieldError(Type.Record(Type.String(), Type.String(), { minProperties: 2 }), { a: 'x' }, 'must have at least 2 fields');
    const patch = errorsOf(Type.Object({ name: Type.Optional(Type.String()) }, { minProperties: 1 }), {});
    assert.equal(summarize([{ ...patch[0]!, path: '/' }]), 'The request body must set at least one field.');
  });

  test('one message per field: the first of several failing keywords', () => {
    const errors = errorsOf(Type.Object({ userId: UserIdSchema }), { userId: '' });
    assert.deepEqual(errors, [{ path: '/userId', message: 'must not be empty' }]);
  });

  test('a union keeps the branch that matters: a string is not told it must be null', () => {
    const schema = Type.Object({ sessionId: Type.Optional(Type.Union([Uuid, Type.Null()])) });
    assert.deepEqual(errorsOf(schema, { sessionId: 'abc' }), [{ path: '/sessionId', message: 'must be a UUID' }]);
    assert.deepEqual(errorsOf(schema, { sessionId: 5 }), [{ path: '/sessionId', message: 'must be a UUID or null' }]);
    const literals = Type.Object({ rating: Type.Union([Type.Literal('up'), Type.Literal('down')]) });
    assert.deepEqual(errorsOf(literals, { rating: 'sideways' }), [{ path: '/rating', message: 'must be "up" or "down"' }]);
    const dates = Type.Object({ since: Type.Unsafe({ type: 'string', anyOf: [{ format: 'date-time' }, { format: 'date' }] }) });
    assert.deepEqual(errorsOf(dates, { since: 'yesterday' }), [
      { path: '/since', message: 'must be a date and time in ISO 8601 form (such as 2026-01-31T09:30:00Z) or a date in ISO 8601 form (such as 2026-01-31)' },
    ]);
    // Of two object shapes, the one the value comes closest to.
    const shapes = Type.Object({
      target: Type.Union([Type.Object({ kind: Type.Literal('page'), url: Type.String() }), Type.Object({ kind: Type.Literal('event'), name: Type.String() })]),
    });
    assert.deepEqual(errorsOf(shapes, { target: { kind: 'event' } }), [{ path: '/target/name', message: 'is required' }]);
    // Unions inside array items are told apart by the item's index.
    const list = Type.Object({ ids: Type.Array(Type.Union([Uuid, Type.Null()])) });
    assert.deepEqual(errorsOf(list, { ids: [null, 'x', ...Array(9).fill(null), 7] }), [
      { path: '/ids/1', message: 'must be a UUID' },
      { path: '/ids/11', message: 'must be a UUID or null' },
    ]);
  });

  test('an if/then rule names its condition (the action schema)', () => {
    const action = { id: 'a', label: 'Open', action: { type: 'open_url' } };
    assert.deepEqual(errorsOf(ActionSchema, action), [{ path: '/action/url', message: 'is required when type is open_url' }]);
    assert.deepEqual(errorsOf(ActionSchema, { ...action, action: { type: 'open_url', url: 'ftp://x.example' } }), [
      { path: '/action/url', message: 'must be an http or https URL when type is open_url' },
    ]);
    assert.deepEqual(errorsOf(ActionSchema, { ...action, action: { type: 'teleport' } }), [
      { path: '/action/type', message: 'must be one of: trigger_handover, open_url, send_event, send_query' },
    ]);
  });

  test('field names as a person reads them', () => {
    const cases: Array<[string, string]> = [
      ['/text', 'text'],
      ['/knowledgeBaseIds/2', 'knowledgeBaseIds[2]'],
      ['/settings/widget/starterQuestions/0', 'settings.widget.starterQuestions[0]'],
      ['/metadata/a b', 'metadata["a b"]'],
      ['/metadata/a~1b', 'metadata["a/b"]'],
      ['/0/title', '"0".title'],
      ['/', 'The request body'],
      ['', 'The request body'],
      ['querystring:/limit', 'Query parameter limit'],
      ['querystring:/', 'The query string'],
      ['params:/id', 'Path parameter id'],
    ];
    for (const [path, name] of cases) assert.equal(fieldName(path), name, path);
  });

  test('the body\'s message names the first problem and counts the others', () => {
    assert.equal(summarize([]), 'The request is invalid.');
    const errors = [
      { path: '/text', message: 'must not be empty' },
      { path: '/sessionId', message: 'must be a UUID' },
      { path: '/userId', message: 'must not be empty' },
    ];
    assert.equal(summarize(errors.slice(0, 1)), 'text must not be empty.');
    assert.equal(summarize(errors.slice(0, 2)), 'text must not be empty (and 1 more problem).');
    const error = validationError(errors);
    assert.equal(error.status, 400);
    assert.equal(error.message, 'text must not be empty (and 2 more problems).');
    assert.deepEqual(error.details, { errors });
  });

  test('malformed JSON: what is wrong and where, once', () => {
    const cases: Array<[string, string]> = [
      ['{"name": "unterminated', 'The request body is not valid JSON: unterminated string at position 22 (line 1, column 23).'],
      ['{\n  "a": 1,\n}', 'The request body is not valid JSON: expected double-quoted property name at position 12 (line 3, column 1).'],
      ['{"a":x}', 'The request body is not valid JSON: unexpected token \'x\' near "{"a":x}".'],
      ['{"a":1} x', 'The request body is not valid JSON: unexpected non-whitespace character after JSON at position 8 (line 1, column 9).'],
      ['{"a":', 'The request body is not valid JSON: the text ends before the JSON value is complete.'],
      ['', 'The request body is empty, but its Content-Type says application/json: send a JSON value, or no Content-Type header.'],
      ['{"__proto__": {"admin": true}}', 'The request body has a "__proto__" or "constructor.prototype" key, which is not accepted.'],
    ];
    for (const [text, message] of cases) {
      assert.equal(malformedJsonMessage(text), message, text);
      assert.ok((message.match(/not valid JSON/g) ?? []).length <= 1, message);
    }
  });

  test('an unsupported content type says which ones the route takes', () => {
    assert.equal(unsupportedMediaTypeMessage('application/xml; charset=utf-8', false), 'The content type application/xml is not supported here; send application/json.');
    assert.equal(
      unsupportedMediaTypeMessage('text/csv', true),
      'The content type text/csv is not supported here; send application/json or multipart/form-data.',
    );
    assert.equal(unsupportedMediaTypeMessage(undefined, false), 'The request has a body but no Content-Type header; send application/json.');
  });
});

describe(`validation messages over HTTP (${engine})`, () => {
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startTestServer();
    ({ token } = await server.tenant());
  });
  after(() => server.close());

  test('query: an empty text and a sessionId that is not a UUID', async () => {
    const answer = await server.request('POST', '/api/v2/query', { body: { text: '', experienceId: randomUUID(), sessionId: 'abc' } });
    const message = assertExactError(answer, 400, '/v2/query', {
      errors: [
        { path: '/text', message: 'must not be empty' },
        { path: '/sessionId', message: 'must be a UUID' },
      ],
    });
    assert.equal(message, 'text must not be empty (and 1 more problem).');
    const blank = await server.request('POST', '/api/v2/query', { body: { text: '  ', experienceId: randomUUID(), sessionId: 7 } });
    assertExactError(blank, 400, '/v2/query', {
      errors: [
        { path: '/text', message: 'must not be blank' },
        { path: '/sessionId', message: 'must be a UUID or null' },
      ],
    });
    const malformed = await server.request('POST', '/api/v2/query', { raw: '{"text": "hi",, }', headers: { 'content-type': 'application/json' } });
    assert.equal(assertExactError(malformed, 400, '/v2/query'), 'The request body is not valid JSON: expected double-quoted property name at position 14 (line 1, column 15).');
  });

  test('jobs: missing fields, a bad list filter, an unsupported content type', async () => {
    const submitted = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, body: { knowledgeBaseId: 'kb-1' } });
    const message = assertExactError(submitted, 400, '/v2/data-ingestion/jobs', {
      errors: [
        { path: '/adapterType', message: 'is required' },
        { path: '/data', message: 'is required' },
        { path: '/knowledgeBaseId', message: 'must be a UUID' },
      ],
    });
    assert.equal(message, 'adapterType is required (and 2 more problems).');
    const listed = await server.request('GET', '/api/v2/data-ingestion/jobs?status=done&startDate=yesterday', { token });
    assertExactError(listed, 400, '/v2/data-ingestion/jobs', {
      errors: [
        { path: 'querystring:/status', message: 'must be one of: pending, processing, completed, failed, cancelled' },
        {
          path: 'querystring:/startDate',
          message: 'must be a date and time in ISO 8601 form (such as 2026-01-31T09:30:00Z) or a date in ISO 8601 form (such as 2026-01-31)',
        },
      ],
    });
    const csv = await server.request('POST', '/api/v2/data-ingestion/jobs', { token, raw: 'id,content', headers: { 'content-type': 'text/csv' } });
    assert.equal(assertExactError(csv, 415, '/v2/data-ingestion/jobs'), 'The content type text/csv is not supported here; send application/json or multipart/form-data.');
  });

  test('experiences: an action without its url, widget settings, an empty change', async () => {
    const created = await server.request('POST', '/api/v2/experiences', {
      token,
      body: {
        name: 'Help',
        actions: [{ id: 'docs', label: 'Docs', action: { type: 'open_url' } }],
        settings: { widget: { starterQuestions: ['a', 'b', 'c', 'd', 'e'], imageHosts: ['Images.Example.com'] } },
      },
    });
    const message = assertExactError(created, 400, '/v2/experiences', {
      errors: [
        { path: '/actions/0/action/url', message: 'is required when type is open_url' },
        { path: '/settings/widget/starterQuestions', message: 'must have at most 4 items (has 5)' },
        { path: '/settings/widget/imageHosts/0', message: 'must be a lower-case host name such as images.example.com, or *.example.com for its subdomains' },
      ],
    });
    assert.equal(message, 'actions[0].action.url is required when type is open_url (and 2 more problems).');
    const experience = await server.request('POST', '/api/v2/experiences', { token, body: { name: 'Help' } });
    const path = `/api/v2/experiences/${experience.body.id}`;
    const emptied = await server.request('PATCH', path, { token, body: {} });
    const emptyMessage = assertExactError(emptied, 400, path.slice(4), { errors: [{ path: '/', message: 'must set at least one field' }] });
    assert.equal(emptyMessage, 'The request body must set at least one field.');
  });

  test('sessions: a userId of the wrong type, an unknown filter', async () => {
    const created = await server.request('POST', '/api/v2/sessions', { token, body: { experienceId: randomUUID(), userId: 42 } });
    assert.equal(assertExactError(created, 400, '/v2/sessions', { errors: [{ path: '/userId', message: 'must be a string or null' }] }), 'userId must be a string or null.');
    const listed = await server.request('GET', '/api/v2/sessions?user_id=ada&limit=0', { token });
    const message = assertExactError(listed, 400, '/v2/sessions', {
      errors: [
        { path: 'querystring:/user_id', message: 'is not a known field (known fields: experienceId, userId, status, feedback, unanswered, limit, offset)' },
        { path: 'querystring:/limit', message: 'must be at least 1' },
      ],
    });
    assert.equal(message, 'Query parameter user_id is not a known field (known fields: experienceId, userId, status, feedback, unanswered, limit, offset) (and 1 more problem).');
  });
});
