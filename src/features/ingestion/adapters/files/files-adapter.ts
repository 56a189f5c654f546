import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../../../core/http/schemas.ts';
import { unstorable } from '../../../../core/http/input-guard.ts';
import type { Adapter, AdapterIssue, Extracted, NormalizedRecord, NormalizeInput, RecordFailure, UploadedFile } from '../adapter.ts';
import { subjectOf } from './bounds.ts';
import { decodeText, detectFormat, type FileFormat } from './detect-format.ts';
import { DocumentError } from './document-error.ts';
import { limits, limitViolation, normalizeLineEndings, normalizeTags } from '../limits.ts';
import { compileSchema, httpUrlPattern, isNonBlank, isObject, IssueList, pointerSegment } from '../schema-issues.ts';
import { firstHeading, shortenText } from '../title.ts';

const formats: readonly FileFormat[] = ['pdf', 'docx', 'html', 'markdown', 'text'];

/** What the manifest may say about one file: the fields of a generic-json record that a file does not provide itself. */
const FileRecordFields = {
  id: Type.Optional(Type.String({ minLength: 1, maxLength: limits.idLength, description: 'The record id; the file name by default.' })),
  title: Type.Optional(Type.String({ maxLength: limits.titleLength, description: 'By default the PDF\'s Title, else the first heading, else the file name.' })),
  url: Type.Optional(Type.String({ format: 'uri', pattern: httpUrlPattern, maxLength: limits.urlLength, description: 'Where readers find the document; PDF sources cite `url#page=N`.' })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: limits.tagLength }), { maxItems: limits.tags })),
  metadata: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'Free key/value pairs, kept as given.' })),
};
const ManifestEntrySchema = Type.Object(FileRecordFields, { additionalProperties: false });

/** The `manifest` part: a JSON object keyed by file name (as uploaded), every key optional. */
export const ManifestSchema = Type.Record(Type.String(), ManifestEntrySchema, {
  description: 'Per-file record fields, keyed by the file name of a `files` part: {"guide.pdf": {"id": "...", "url": "https://..."}}.',
});

const StoredFileSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: limits.idLength, description: 'The file name as uploaded.' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    format: Type.Union([StringEnum(formats), Type.Null()], { description: 'Detected from the content; null: a type lore cannot read.' }),
    mediaType: Type.Union([Type.String(), Type.Null()], { description: 'The detected media type, null when unknown.' }),
    ...FileRecordFields,
  },
  { additionalProperties: false },
);

/** The payload a files job stores (shown by includePayload=true): one element per uploaded file, in upload order. */
const PayloadSchema = Type.Object(
  { files: Type.Array(StoredFileSchema, { minItems: 1, maxItems: limits.records }) },
  { additionalProperties: false, description: 'Payload of the files adapter, built by lore from the multipart upload.' },
);
type StoredFile = Static<typeof StoredFileSchema>;
type Payload = Static<typeof PayloadSchema>;

const payloadIssues = compileSchema(PayloadSchema);
const manifestEntryIssues = compileSchema(ManifestEntrySchema);

/** The manifest's problems, and its entries by file name. */
function readManifest(manifest: unknown, names: Set<string>): { issues: AdapterIssue[]; entries: Map<string, Record<string, unknown>> } {
  const issues = new IssueList();
  const entries = new Map<string, Record<string, unknown>>();
  if (manifest === undefined) return { issues: [], entries };
  if (!isObject(manifest)) return { issues: [{ path: '/manifest', message: 'must be a JSON object keyed by file name' }], entries };
  for (const [name, entry] of Object.entries(manifest)) {
    const at = `/manifest/${pointerSegment(name)}`;
    if (!names.has(name)) {
      issues.add({ path: at, message: `names no uploaded file (the files are: ${[...names].slice(0, 10).join(', ')}${names.size > 10 ? ', …' : ''})` });
      continue;
    }
    const problems = manifestEntryIssues(entry, at);
    issues.add(...problems);
    if (problems.length === 0) {
      const fields = entry as Record<string, unknown>;
      if (typeof fields.id === 'string' && !isNonBlank(fields.id)) issues.add({ path: `${at}/id`, message: 'must not be blank' });
      entries.set(name, fields);
    }
  }
  return { issues: issues.toArray(), entries };
}

/** Builds the stored payload: each file's size, hash and detected format, with its manifest fields. */
async function fromFiles(files: UploadedFile[], manifest: unknown): Promise<{ data: Payload; issues: AdapterIssue[] }> {
  const issues = new IssueList();
  if (files.length === 0) issues.add({ path: '/files', message: 'needs at least one file part named files' });
  const firstIndex = new Map<string, number>();
  files.forEach((file, index) => {
    if (file.name.trim() === '') issues.add({ path: `/files/${index}`, message: 'has no file name (the part needs a filename)' });
    else if (file.name.length > limits.idLength) issues.add({ path: `/files/${index}`, message: `has a file name longer than ${limits.idLength} characters` });
    // The name becomes the record id, stored as text: refused rather than repaired, so that an id
    // never silently differs from the name the client sent.
    else if (unstorable(file.name)) issues.add({ path: `/files/${index}`, message: 'has a file name with NUL characters or unpaired surrogates' });
    const first = firstIndex.get(file.name);
    if (first !== undefined) issues.add({ path: `/files/${index}`, message: `repeats the file name ${file.name} of /files/${first}; file names must be unique` });
    else firstIndex.set(file.name, index);
  });
  const manifestRead = readManifest(manifest, new Set(firstIndex.keys()));
  issues.add(...manifestRead.issues);
  const stored: StoredFile[] = [];
  const ids = new Map<string, string>();
  for (const file of files) {
    const fields = manifestRead.entries.get(file.name) ?? {};
    const id = (fields.id as string | undefined) ?? file.name;
    const twin = ids.get(id);
    if (twin !== undefined && twin !== file.name) {
      issues.add({ path: `/manifest/${pointerSegment(file.name)}/id`, message: `gives the record id ${id}, which ${twin} has too; ids must be unique` });
    }
    ids.set(id, file.name);
    const detected = await detectFormat(file.name, file.bytes);
    stored.push({
      name: file.name,
      size: file.bytes.length,
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
      ...detected,
      ...fields,
    });
  }
  return { data: { files: stored }, issues: issues.toArray() };
}

const readable = 'lore reads PDF, DOCX, HTML, Markdown and plain text';

/** A file's text: extracted (PDF, DOCX, HTML) or read as it is. */
type FileText = Omit<Extracted, 'contentType'> & { contentType: 'markdown' | 'text' };

/**
 * Markdown and plain text are read here, on the worker's own thread, rather than on the extraction
 * thread: decoding is linear and bounded by the upload's size, with nothing to inflate or recurse.
 */
function readText(format: 'markdown' | 'text', bytes: Buffer): FileText {
  const content = normalizeLineEndings(decodeText(bytes));
  return format === 'markdown' ? { content, contentType: 'markdown', title: firstHeading(content) } : { content, contentType: 'text', title: undefined };
}

/** One uploaded file as a record, or the reason it cannot be one. */
async function normalizeFile(ordinal: number, file: StoredFile, input: NormalizeInput): Promise<NormalizedRecord | RecordFailure> {
  const id = file.id ?? file.name;
  if (file.size === 0) return { id, error: 'The file is empty.' };
  const format = file.format;
  if (format === null) {
    return { id, error: `Unsupported file type (${file.mediaType ?? 'binary data of an unknown type'}): ${readable}.` };
  }
  if (input.interrupted(ordinal)) {
    return { id, error: `${subjectOf(format)} was being extracted when the process extracting it stopped (a crash, or the system ran out of memory): lore does not extract it again.` };
  }
  const bytes = await input.readFile(ordinal);
  let extracted: FileText;
  if (format === 'markdown' || format === 'text') extracted = readText(format, bytes);
  else {
    try {
      extracted = await input.extract(ordinal, format, bytes);
    } catch (error) {
      if (!(error instanceof DocumentError)) throw error;
      return { id, error: error.message };
    }
  }
  if (!isNonBlank(extracted.content)) return { id, error: `The ${file.format === 'docx' ? 'DOCX' : file.format} file has no text.` };
  const title = file.title?.replace(/\s+/g, ' ').trim();
  const record: NormalizedRecord = {
    id,
    title: title || extracted.title || shortenText(file.name),
    content: extracted.content,
    contentType: extracted.contentType,
    url: file.url ?? null,
    tags: normalizeTags(file.tags ?? []),
    // The manifest's metadata wins over what lore records of the file.
    metadata: { format: file.format, ...(extracted.pageCount === undefined ? {} : { pageCount: extracted.pageCount }), ...file.metadata },
    deleted: false,
    ...(extracted.pageStarts ? { pageStarts: extracted.pageStarts } : {}),
  };
  const violation = limitViolation(record);
  return violation === undefined ? record : { id, error: violation };
}

/** Uploaded documents (multipart parts named `files`): PDF, DOCX, HTML, Markdown and plain text, detected by content. */
export const filesAdapter: Adapter = {
  name: 'files',
  format: 'multipart',
  version: '1.0.0',
  schema: PayloadSchema,
  validate: (data) => payloadIssues(data),
  fromFiles,
  count(data) {
    return (data as Payload).files.length;
  },
  async *normalize(data, input) {
    const { files } = data as Payload;
    for (let ordinal = 0; ordinal < files.length; ordinal += 1) {
      yield input.isDone(ordinal) ? null : await normalizeFile(ordinal, files[ordinal]!, input);
    }
  },
};
