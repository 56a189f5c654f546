import { Type, type Static, type TSchema } from 'typebox';
import { StringEnum } from '../../../core/http/schemas.ts';
import type { Adapter, AdapterIssue, ContentType, NormalizedRecord, RecordFailure } from './adapter.ts';
import { entityEncodedHtmlToMarkdown } from './html-to-markdown.ts';
import { isHttpUrl, limits, limitViolation, normalizeTags } from './limits.ts';
import { compileSchema, isObject, IssueList, UniqueIds } from './schema-issues.ts';
import { deriveTitle, shortenText } from './title.ts';

const valueFields = {
  STRING: 'stringValue',
  NUMBER: 'numberValue',
  BOOLEAN: 'booleanValue',
  STRING_LIST: 'stringListValue',
} as const;
type ValueType = keyof typeof valueFields;

const AttributeSchema = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 256 }),
  value: Type.Object({
    type: StringEnum(Object.keys(valueFields) as ValueType[], { description: 'Which of the value fields carries the value.' }),
    stringValue: Type.Optional(Type.String()),
    numberValue: Type.Optional(Type.Number()),
    booleanValue: Type.Optional(Type.Boolean()),
    stringListValue: Type.Optional(Type.Array(Type.String())),
  }),
});

const ItemSchema = Type.Object({
  content: Type.Object({
    documentIdentifier: Type.String({ minLength: 1, maxLength: limits.idLength, description: 'The record id.' }),
    parseImage: Type.Optional(Type.Boolean({ description: 'Accepted and ignored: images become Markdown images (inline data images their alt text).' })),
    deleted: Type.Optional(Type.Boolean({ default: false })),
    inlineContent: Type.Optional(
      Type.Object(
        {
          type: Type.Optional(StringEnum(['TEXT'])),
          textContent: Type.Object({
            // Entity encoding and markup typically triple the text, so this admits any HTML whose
            // Markdown can fit the content limit.
            data: Type.String({ maxLength: 4 * limits.contentLength, description: 'Entity-encoded HTML.' }),
          }),
        },
        { description: 'Required unless deleted is true.' },
      ),
    ),
  }),
  metadata: Type.Optional(Type.Object({ inlineAttributes: Type.Optional(Type.Array(AttributeSchema)) })),
});

/**
 * Element 0 the items, element 1 the export's summary; with `Type.Unknown()` items it is the
 * envelope checked once. TypeBox's Tuple emits the draft-07 array form of `items`, while OpenAPI
 * 3.1 and the 2020-12 validator want `prefixItems`.
 */
function payloadSchema<Item extends TSchema>(item: Item) {
  return Type.Unsafe<[Static<Item>[], { timeTaken?: string }]>({
    type: 'array',
    prefixItems: [Type.Array(item, { maxItems: limits.records }), Type.Object({ timeTaken: Type.Optional(Type.String()) })],
    minItems: 2,
    maxItems: 2,
    description: 'Payload of the content-hub adapter: [items, {timeTaken}].',
  });
}

const PayloadSchema = payloadSchema(ItemSchema);
type Item = Static<typeof ItemSchema>;
type Attribute = Static<typeof AttributeSchema>;
type Payload = Static<typeof PayloadSchema>;

const envelopeIssues = compileSchema(payloadSchema(Type.Unknown()));
const itemSchemaIssues = compileSchema(ItemSchema);

/** The value field an attribute's type names, when it is missing. */
function missingValueIssue(attribute: unknown, at: string): AdapterIssue | undefined {
  if (!isObject(attribute) || !isObject(attribute.value)) return undefined;
  const type = attribute.value.type;
  if (typeof type !== 'string' || !Object.hasOwn(valueFields, type)) return undefined;
  const field = valueFields[type as ValueType];
  return attribute.value[field] === undefined ? { path: `${at}/value/${field}`, message: `is required when type is ${type}` } : undefined;
}

/**
 * Every problem of a payload, item by item, stopping at the issue limit. Besides the schema:
 * unique documentIdentifiers, inlineContent unless the item is a deletion, and the value field
 * each attribute's type names.
 */
function validatePayload(data: unknown): AdapterIssue[] {
  const issues = new IssueList();
  issues.add(...envelopeIssues(data));
  const items = Array.isArray(data) && Array.isArray(data[0]) ? (data[0] as unknown[]) : [];
  const ids = new UniqueIds('documentIdentifier', (index) => `/0/${index}`);
  for (let index = 0; index < items.length && !issues.full; index += 1) {
    const item: unknown = items[index];
    const at = `/0/${index}`;
    issues.add(...itemSchemaIssues(item, at));
    if (!isObject(item)) continue;
    const { content, metadata } = item;
    if (isObject(content)) {
      const idIssue = ids.check(content.documentIdentifier, index, `${at}/content/documentIdentifier`);
      if (idIssue) issues.add(idIssue);
      if (content.deleted !== true && content.inlineContent === undefined) {
        issues.add({ path: `${at}/content/inlineContent`, message: 'is required (unless deleted is true)' });
      }
    }
    const attributes = isObject(metadata) && Array.isArray(metadata.inlineAttributes) ? (metadata.inlineAttributes as unknown[]) : [];
    for (let attributeIndex = 0; attributeIndex < attributes.length; attributeIndex += 1) {
      const issue = missingValueIssue(attributes[attributeIndex], `${at}/metadata/inlineAttributes/${attributeIndex}`);
      if (issue) issues.add(issue);
    }
  }
  return issues.toArray();
}

function valueOf(attribute: Attribute): unknown {
  return attribute.value[valueFields[attribute.value.type]];
}

/** The strings an attribute carries: a STRING's value, a STRING_LIST's elements, nothing for other types. */
function textsOf(attribute: Attribute): string[] {
  if (attribute.value.type === 'STRING') return [attribute.value.stringValue ?? ''];
  if (attribute.value.type === 'STRING_LIST') return attribute.value.stringListValue ?? [];
  return [];
}

const titleKeys = new Set(['title']);
const urlKeys = new Set(['url', 'link']);
const keywordKeys = new Set(['keywords']);
const isTaxonomyKey = (key: string) => key.startsWith('taxonomy') || ['taxonomies', 'category', 'categories'].includes(key);
// Custom entity fields: the export prefixes them `custom`/`entity`; lists are entity pickers too.
const isEntityField = (key: string, attribute: Attribute) =>
  key.startsWith('custom') || key.startsWith('entit') || (attribute.value.type === 'STRING_LIST' && !titleKeys.has(key) && !urlKeys.has(key));

const faqLike = /\b(?:faqs?|q\s*&\s*a|questions?|frequently[\s-]+asked)\b/;
const codeLike = /\b(?:code|snippets?|api[\s_-]*ref(?:erence)?s?)\b/;

/** `qa_pair` for FAQ-like taxonomies (question and answer stay in one chunk), `code` for code, else `markdown`. */
export function contentTypeOfTaxonomy(values: string[]): ContentType {
  const taxonomy = values.join(' | ').toLowerCase();
  if (faqLike.test(taxonomy)) return 'qa_pair';
  if (codeLike.test(taxonomy)) return 'code';
  return 'markdown';
}

function normalizeItem(item: Item): NormalizedRecord | RecordFailure {
  const id = item.content.documentIdentifier;
  const deleted = item.content.deleted === true;
  const attributes = item.metadata?.inlineAttributes ?? [];
  // A repeated key keeps its last value; Object.fromEntries also makes a `__proto__` key a plain field.
  const byKey = new Map<string, Attribute>();
  for (const attribute of attributes) byKey.set(attribute.key, attribute);
  const metadata = Object.fromEntries([...byKey].map(([key, attribute]) => [key, valueOf(attribute)]));
  const withKey = (matches: (key: string, attribute: Attribute) => boolean) =>
    [...byKey.values()].filter((attribute) => matches(attribute.key.toLowerCase(), attribute));
  const firstText = (keys: Set<string>) =>
    withKey((key) => keys.has(key))
      .flatMap(textsOf)
      .map((text) => text.trim())
      .find((text) => text !== '');

  let content = '';
  if (!deleted) {
    try {
      content = entityEncodedHtmlToMarkdown(item.content.inlineContent?.textContent.data ?? '');
    } catch (error) {
      return { id, error: `the HTML could not be converted to Markdown: ${(error as Error).message}` };
    }
    if (content === '') return { id, error: 'content is empty after converting the HTML to Markdown' };
  }
  const title = firstText(titleKeys);
  const url = firstText(urlKeys);
  const record: NormalizedRecord = {
    id,
    title: title ? shortenText(title.replace(/\s+/g, ' '), limits.titleLength) : deriveTitle(content, id),
    content,
    contentType: contentTypeOfTaxonomy(withKey(isTaxonomyKey).flatMap(textsOf)),
    url: url !== undefined && isHttpUrl(url) ? url : null,
    tags: normalizeTags([
      ...withKey((key) => keywordKeys.has(key)).flatMap((attribute) =>
        attribute.value.type === 'STRING' ? (attribute.value.stringValue ?? '').split(',') : textsOf(attribute),
      ),
      ...withKey((key, attribute) => !keywordKeys.has(key) && isEntityField(key, attribute)).flatMap(textsOf),
    ]),
    metadata,
    deleted,
  };
  const violation = limitViolation(record);
  return violation === undefined ? record : { id, error: violation };
}

/** `[items, {timeTaken}]`, a content-hub export: entity-encoded HTML with typed inline attributes. */
export const contentHubAdapter = {
  name: 'content-hub',
  format: 'content-hub-json',
  version: '1.0.0',
  schema: PayloadSchema,
  validate: validatePayload,
  count(data) {
    return (data as Payload)[0].length;
  },
  *normalize(data) {
    for (const item of (data as Payload)[0]) yield normalizeItem(item);
  },
  subset(data, ordinals) {
    const [items, details] = data as Payload;
    return [ordinals.map((ordinal) => items[ordinal]), details];
  },
} satisfies Adapter;
