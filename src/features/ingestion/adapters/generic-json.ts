import { Type, type Static, type TSchema } from 'typebox';
import { StringEnum } from '../../../core/http/schemas.ts';
import type { Adapter, AdapterIssue, ContentType, NormalizedRecord } from './adapter.ts';
import { limits, normalizeLineEndings, normalizeTags } from './limits.ts';
import { compileSchema, httpUrlPattern, isNonBlank, isObject, IssueList, UniqueIds } from './schema-issues.ts';
import { deriveTitle } from './title.ts';

const contentTypes: readonly ContentType[] = ['text', 'markdown', 'code', 'qa_pair'];

const RecordSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: limits.idLength, description: 'Unique identifier of the record within its source.' }),
    title: Type.Optional(Type.String({ maxLength: limits.titleLength, description: 'Generated from the content when omitted or blank.' })),
    content: Type.Optional(
      Type.String({ maxLength: limits.contentLength, description: 'Main text. Required and not blank, except on records with `deleted: true`.' }),
    ),
    contentType: Type.Optional(StringEnum(contentTypes, { default: 'text' })),
    metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'Free key/value pairs, kept as given.' })),
    deleted: Type.Optional(Type.Boolean({ default: false, description: 'When true, the entry with this id is deleted.' })),
    url: Type.Optional(Type.String({ format: 'uri', pattern: httpUrlPattern, maxLength: limits.urlLength, description: 'External reference URL.' })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: limits.tagLength }), { maxItems: limits.tags })),
  },
  // Unknown fields are rejected: a misspelt `contentype` or `tag` would otherwise be dropped silently.
  { additionalProperties: false },
);

/** The payload with records of the given schema; with `Type.Unknown()` it is the envelope checked once. */
function payloadSchema<RecordSchemaType extends TSchema>(records: RecordSchemaType) {
  return Type.Object(
    { records: Type.Array(records, { maxItems: limits.records }) },
    { additionalProperties: false, description: 'Payload of the generic-json adapter.' },
  );
}

const PayloadSchema = payloadSchema(RecordSchema);
type GenericRecord = Static<typeof RecordSchema>;
type Payload = Static<typeof PayloadSchema>;

const envelopeIssues = compileSchema(payloadSchema(Type.Unknown()));
const recordSchemaIssues = compileSchema(RecordSchema);

/**
 * Every problem of a payload, record by record, stopping at the issue limit. Besides the schema:
 * unique ids, and content required unless the record is a deletion. No per-record closures: this
 * loop runs on every submitted record.
 */
function validatePayload(data: unknown): AdapterIssue[] {
  const issues = new IssueList();
  issues.add(...envelopeIssues(data));
  const records = isObject(data) && Array.isArray(data.records) ? data.records : [];
  const ids = new UniqueIds('id', (index) => `/records/${index}`);
  for (let index = 0; index < records.length && !issues.full; index += 1) {
    const record: unknown = records[index];
    const at = `/records/${index}`;
    issues.add(...recordSchemaIssues(record, at));
    if (!isObject(record)) continue;
    const idIssue = ids.check(record.id, index, `${at}/id`);
    if (idIssue) issues.add(idIssue);
    if (record.deleted === true) continue;
    const content = record.content;
    if (content === undefined) issues.add({ path: `${at}/content`, message: 'is required (unless deleted is true)' });
    else if (typeof content === 'string' && !isNonBlank(content)) {
      issues.add({ path: `${at}/content`, message: 'must not be empty or blank (unless deleted is true)' });
    }
  }
  return issues.toArray();
}

function normalizeRecord(record: GenericRecord): NormalizedRecord {
  const content = normalizeLineEndings(record.content ?? '');
  const title = record.title?.replace(/\s+/g, ' ').trim();
  return {
    id: record.id,
    title: title || deriveTitle(content, record.id),
    content,
    contentType: record.contentType ?? 'text',
    url: record.url ?? null,
    tags: normalizeTags(record.tags ?? []),
    metadata: record.metadata ?? {},
    deleted: record.deleted === true,
  };
}

/** `{records: [Record]}`, the spec's generic format: records already in lore's shape. */
export const genericJsonAdapter = {
  name: 'generic-json',
  format: 'json',
  version: '1.0.0',
  schema: PayloadSchema,
  validate: validatePayload,
  count(data) {
    return (data as Payload).records.length;
  },
  *normalize(data) {
    for (const record of (data as Payload).records) yield normalizeRecord(record);
  },
  subset(data, ordinals) {
    const { records } = data as Payload;
    return { records: ordinals.map((ordinal) => records[ordinal]) };
  },
} satisfies Adapter;
