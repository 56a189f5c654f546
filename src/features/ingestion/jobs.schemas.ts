import { Type, type Static } from 'typebox';
import { PageQuery, StringEnum, Timestamp, Uuid } from '../../core/http/schemas.ts';

export const jobStatuses = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const SubmitJobSchema = Type.Object(
  {
    adapterType: Type.String({ minLength: 1, description: 'An adapter name from GET /api/v2/data-ingestion/adapters.' }),
    data: Type.Unsafe<unknown>({ type: ['object', 'array'], description: 'The payload; its shape depends on the adapter.' }),
    knowledgeBaseId: Uuid,
  },
  { additionalProperties: false },
);

export const SubmitMultipartSchema = Type.Object({
  adapterType: Type.String(),
  knowledgeBaseId: Uuid,
  data: Type.Optional(Type.String({ format: 'binary', description: 'A JSON file, or the JSON text (every adapter but files).' })),
  files: Type.Optional(
    Type.Array(Type.String({ format: 'binary' }), { description: 'adapterType=files: the documents (PDF, DOCX, HTML, Markdown, text), one part each, at most 1,000.' }),
  ),
  manifest: Type.Optional(
    Type.String({ description: 'adapterType=files: JSON keyed by file name, each value {id?, title?, url?, tags?, metadata?}.' }),
  ),
});

export const SubmittedSchema = Type.Object({ jobId: Uuid, status: Type.Literal('pending') });

const RecordResultSchema = Type.Object({
  sourceId: Type.String({ description: 'The record\'s own identifier.' }),
  status: StringEnum(['success', 'skipped', 'deleted', 'failed']),
  entryId: Type.Union([Uuid, Type.Null()]),
  embeddingCount: Type.Integer(),
  action: Type.Optional(StringEnum(['created', 'updated'])),
  reason: Type.Optional(Type.String({ description: 'Why a record was skipped: unchanged, duplicate, not_found, superseded.' })),
  duplicateOf: Type.Optional(Uuid),
  error: Type.Optional(Type.String()),
});

export const JobSchema = Type.Object({
  id: Uuid,
  status: StringEnum(jobStatuses),
  data: Type.Object({
    adapterId: Type.String(),
    adapterType: Type.String(),
    knowledgeBaseId: Uuid,
    recordCount: Type.Integer(),
    fileName: Type.Union([Type.String(), Type.Null()], {
      description: 'The name of the uploaded file whose records the job ingests (a multipart data part with a file name); null for a JSON body and for a files job, whose results name each file.',
    }),
    retryOf: Type.Union([Uuid, Type.Null()], { description: 'The job whose failed records this job retries (POST .../jobs/{jobId}/retry), else null.' }),
    progress: Type.Object({
      processed: Type.Integer(),
      total: Type.Integer(),
      successful: Type.Integer(),
      failed: Type.Integer(),
      skipped: Type.Integer(),
    }),
    eta: Type.Union([
      Type.Object({ recordsPerSecond: Type.Number(), secondsRemaining: Type.Number() }),
      Type.Null(),
    ], { description: 'Throughput so far and the time left at that rate, while processing.' }),
    timings: Type.Record(Type.String(), Type.Number(), { description: 'Milliseconds spent per stage: parse, hash, chunk, embed, write.' }),
    results: Type.Array(RecordResultSchema),
  }),
  result: Type.Object({
    sourceId: Uuid,
    entriesCreated: Type.Integer(),
    entriesUpdated: Type.Integer(),
    entriesSkipped: Type.Integer(),
    entriesDeleted: Type.Integer(),
    entriesFailed: Type.Integer(),
    embeddingsGenerated: Type.Integer(),
    error: Type.Optional(Type.String()),
  }),
  payload: Type.Optional(Type.Unsafe<unknown>({ description: 'The submitted data, with includePayload=true.' })),
  created_at: Timestamp,
  started_at: Type.Union([Timestamp, Type.Null()]),
  completed_at: Type.Union([Timestamp, Type.Null()]),
});

export type Job = Static<typeof JobSchema>;
export type RecordResult = Static<typeof RecordResultSchema>;

/** An ISO 8601 date-time, or a date (midnight UTC). */
function IsoDate(description: string) {
  return Type.Unsafe<string>({ type: 'string', anyOf: [{ format: 'date-time' }, { format: 'date' }], description });
}

export const ListJobsQuery = Type.Object({
  status: Type.Optional(StringEnum(jobStatuses)),
  ...PageQuery,
  includePayload: Type.Boolean({ default: false }),
  startDate: Type.Optional(IsoDate('Only jobs created at or after this instant.')),
  endDate: Type.Optional(IsoDate('Only jobs created before this instant.')),
});

export const GetJobQuery = Type.Object({ includePayload: Type.Boolean({ default: false }) });
export const JobParams = Type.Object({ jobId: Uuid });

export const AdapterSchema = Type.Object({ name: Type.String(), format: Type.String(), version: Type.String() });
