import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import multipart from '@fastify/multipart';
import type { AppContext } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { validationError } from '../../core/http/validation-messages.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, responses } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import type { TokenClaims } from '../auth/tokens.ts';
import { getKnowledgeBase } from '../knowledge-bases/knowledge-bases.service.ts';
import type { KnowledgeBase } from '../knowledge-bases/knowledge-bases.schemas.ts';
import type { Adapter, UploadedFile } from './adapters/adapter.ts';
import { adapters, findAdapter } from './adapters/registry.ts';
import { JobResultsCache } from './job-results.ts';
import {
  AdapterSchema,
  GetJobQuery,
  JobParams,
  JobSchema,
  ListJobsQuery,
  SubmitJobSchema,
  SubmitMultipartSchema,
  SubmittedSchema,
} from './jobs.schemas.ts';
import { cancelJob, failedRecords, getJob, listJobs, submitJob } from './jobs.service.ts';
import { multipartLimits, parseJsonPart, readMultipart } from './multipart-submission.ts';

const security = [{ bearerAuth: [] }];
const tags = ['data-ingestion'];
const MB = 1024 * 1024;
// Per API process: 100 jobs of 5,000 records (670 KB of results each), or five of 100,000.
const RESULTS_CACHE_BYTES = 64 * MB;

type Submission = {
  adapterType?: unknown;
  knowledgeBaseId?: unknown;
  data?: unknown;
  dataText?: string;
  /** The file name of a multipart `data` part sent as a file. */
  dataFileName?: string;
  /** Multipart only: the `files` parts and the parsed `manifest` part. */
  files?: UploadedFile[];
  manifest?: unknown;
};

/** Reads a multipart submission: text fields, `data` as a file part or a text field, or `files` parts with a `manifest`. */
async function readMultipartSubmission(request: FastifyRequest, limitBytes: number): Promise<Submission> {
  const { fields, fileNames, files } = await readMultipart(request, limitBytes);
  const submission: Submission = { adapterType: fields.adapterType, knowledgeBaseId: fields.knowledgeBaseId, dataFileName: fileNames.data, files };
  if (fields.manifest !== undefined) submission.manifest = parseJsonPart(fields.manifest, '/manifest', 'must be a JSON object keyed by file name');
  if (fields.data !== undefined) {
    submission.data = parseJsonPart(fields.data, '/data', 'must be a JSON file or a JSON string');
    // The upload's own text is stored (no second serialization of up to 30 MB) unless it escapes
    // a NUL or a surrogate, which a repair may change.
    if (!/\\u(0000|d[89a-f])/i.test(fields.data)) submission.dataText = fields.data;
  }
  return submission;
}

type Required = { adapterType: string; knowledgeBaseId: string; data: unknown; dataText?: string };

function requireFields(submission: Submission, needsData: boolean): Required {
  const errors = [];
  if (typeof submission.adapterType !== 'string' || submission.adapterType === '') errors.push({ path: '/adapterType', message: 'is required' });
  if (needsData && (submission.data === undefined || submission.data === null)) errors.push({ path: '/data', message: 'is required' });
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  if (typeof submission.knowledgeBaseId !== 'string' || !uuid.test(submission.knowledgeBaseId)) {
    errors.push({ path: '/knowledgeBaseId', message: 'must be a UUID' });
  }
  if (errors.length > 0) throw validationError(errors);
  return submission as Required;
}

/**
 * The payload of a files submission, built from its file parts and manifest (400 with every
 * manifest problem). Files come only as multipart, and other adapters take no file parts.
 */
async function filesPayload(adapter: Adapter, submission: Submission, multipart: boolean): Promise<unknown> {
  if (!adapter.fromFiles) {
    if (submission.files && submission.files.length > 0) {
      throw new AppError('VALIDATION_FAILED', `File parts named files are for adapterType=files; ${adapter.name} takes its payload as one data part.`, {
        errors: [{ path: '/files', message: `is not taken by ${adapter.name}` }],
      });
    }
    return submission.data;
  }
  if (!multipart) {
    throw new AppError('VALIDATION_FAILED', 'The files adapter takes multipart/form-data with file parts named files (and an optional manifest part), not a JSON body.', {
      errors: [{ path: '/adapterType', message: 'files needs a multipart/form-data body' }],
    });
  }
  if (submission.data !== undefined) {
    throw new AppError('VALIDATION_FAILED', 'The files adapter takes file parts named files, not a data part.', {
      errors: [{ path: '/data', message: 'is not taken by files; send file parts named files' }],
    });
  }
  const { data, issues } = await adapter.fromFiles(submission.files ?? [], submission.manifest);
  if (issues.length > 0) {
    throw new AppError('VALIDATION_FAILED', `The upload does not match the files adapter: ${issues[0]!.path} ${issues[0]!.message}`, { errors: issues });
  }
  return data;
}

/**
 * The knowledge base a job of `auth` may write to: one its token may use (403), of its workspace
 * (404), whose stored vectors are of this service's embedding model (409).
 */
async function writableKnowledgeBase(context: AppContext, auth: TokenClaims, knowledgeBaseId: string): Promise<KnowledgeBase> {
  assertKnowledgeBaseAllowed(auth, knowledgeBaseId);
  const knowledgeBase = await getKnowledgeBase(context.db, auth.workspaceId, knowledgeBaseId);
  const { embedder } = context;
  if (knowledgeBase.embedding && (knowledgeBase.embedding.provider !== embedder.name || knowledgeBase.embedding.model !== embedder.model)) {
    throw new AppError(
      'CONFLICT',
      `The knowledge base holds vectors of ${knowledgeBase.embedding.provider}/${knowledgeBase.embedding.model}, ` +
        `but this service embeds with ${embedder.name}/${embedder.model}; vectors of different models cannot be mixed.`,
    );
  }
  return knowledgeBase;
}

/** The data-ingestion API: submit, list, get, cancel and retry jobs; list adapters. */
export async function registerIngestionRoutes(app: App, context: AppContext): Promise<void> {
  const canRead = authorize(context, ['data-ingestion:read']);
  const canWrite = authorize(context, ['data-ingestion:write']);
  const { jsonBodyLimitBytes, multipartLimitBytes } = context.config;
  const results = new JobResultsCache(RESULTS_CACHE_BYTES);
  // preservePath: a file part's name keeps its directories (guides/setup.md), which lore ingest
  // sends so that the record ids of a folder's files stay unique.
  await app.register(multipart, { limits: multipartLimits(multipartLimitBytes), throwFileSizeLimit: true, preservePath: true });

  app.post(
    '/api/v2/data-ingestion/jobs',
    {
      onRequest: canWrite,
      bodyLimit: jsonBodyLimitBytes,
      config: {
        // Decided in docs/decisions.md: NUL characters in ingested content are removed, not refused.
        repairTextIn: ['data'],
        tooLargeMessage:
          `JSON bodies are limited to ${Math.round(jsonBodyLimitBytes / MB)} MB: upload the payload as multipart/form-data ` +
          `(up to ${Math.round(multipartLimitBytes / MB)} MB), or split it into several jobs of 100 to 500 records.`,
      },
      schema: {
        tags,
        security,
        summary: 'Submit an ingestion job (JSON, or multipart with a JSON file); processed in the background',
        // Only JSON bodies are validated by Fastify; the multipart form is streamed and checked in
        // the handler, and its schema only documents it (see multipartBody in app.ts).
        body: { content: { 'application/json': { schema: SubmitJobSchema } } },
        multipartBody: SubmitMultipartSchema,
        response: responses({ 202: SubmittedSchema }, [...guardedErrors, 404, 409, 413]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      // No body at all (and no content type) arrives as undefined: every field is missing.
      const multipart = request.isMultipart();
      const received = multipart ? await readMultipartSubmission(request, multipartLimitBytes) : ((request.body ?? {}) as Submission);
      const named = typeof received.adapterType === 'string' ? findAdapter(received.adapterType) : undefined;
      const submission = requireFields(received, !named?.fromFiles);
      const adapter = findAdapter(submission.adapterType);
      if (!adapter) {
        throw new AppError('VALIDATION_FAILED', `Unknown adapterType ${submission.adapterType}; known: ${adapters.map((a) => a.name).join(', ')}.`, {
          errors: [{ path: '/adapterType', message: `must be one of: ${adapters.map((a) => a.name).join(', ')}` }],
        });
      }
      const data = await filesPayload(adapter, received, multipart);
      const issues = adapter.validate(data);
      if (issues.length > 0) {
        const [first] = issues;
        throw new AppError('VALIDATION_FAILED', `The payload does not match the ${adapter.name} schema: ${first!.path} ${first!.message}`, { errors: issues });
      }
      const knowledgeBase = await writableKnowledgeBase(context, auth, submission.knowledgeBaseId);
      const submitted = await submitJob(context.db, {
        workspaceId: auth.workspaceId,
        knowledgeBaseId: knowledgeBase.id,
        adapter,
        adapterType: submission.adapterType,
        data,
        payloadText: submission.dataText,
        files: received.files?.map((file) => file.bytes),
        fileName: received.dataFileName ?? null,
      });
      context.workers.nudge();
      return reply.code(202).send(submitted);
    },
  );

  app.get(
    '/api/v2/data-ingestion/jobs',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'List the workspace\'s ingestion jobs (a restricted token: of its knowledge bases), newest first',
        querystring: ListJobsQuery,
        response: responses({ 200: Type.Object({ total: Type.Integer(), jobs: Type.Array(JobSchema) }) }, guardedErrors),
      },
    },
    // The bodies are JSON text already (see job-results.ts): sent as they are, not serialized again.
    async (request, reply) => reply.type('application/json; charset=utf-8').send(await listJobs(context.db, results, caller(request), request.query)),
  );

  app.get(
    '/api/v2/data-ingestion/jobs/:jobId',
    {
      onRequest: canRead,
      schema: {
        tags,
        security,
        summary: 'Get an ingestion job with its progress and per-record results',
        params: JobParams,
        querystring: GetJobQuery,
        response: responses({ 200: JobSchema }, [...guardedErrors, 404]),
      },
    },
    async (request, reply) =>
      reply.type('application/json; charset=utf-8').send(await getJob(context.db, results, caller(request), request.params.jobId, request.query.includePayload)),
  );

  app.delete(
    '/api/v2/data-ingestion/jobs/:jobId',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Cancel a pending or processing job (it becomes cancelled; what was written stays)',
        params: JobParams,
        response: responses({ 204: Type.Null() }, [...guardedErrors, 404, 409]),
      },
    },
    async (request, reply) => {
      await cancelJob(context.db, caller(request), request.params.jobId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/api/v2/data-ingestion/jobs/:jobId/retry',
    {
      onRequest: canWrite,
      schema: {
        tags,
        security,
        summary: 'Retry what a finished job left undone: a new job of its failed records and the ones it never processed',
        description:
          'The new job takes the failed records, and those a job that failed or was cancelled part-way never processed, from the payload the finished job keeps, in their order, with the same adapter, knowledge base and file name; its data.retryOf names the finished job. ' +
          '409 while the job is pending or processing, when it left no record undone, and for a files job (its uploaded files are not kept once it ends).',
        params: JobParams,
        response: responses({ 202: JobSchema }, [...guardedErrors, 404, 409]),
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const retry = await failedRecords(context.db, auth, request.params.jobId);
      await writableKnowledgeBase(context, auth, retry.knowledgeBaseId);
      const { jobId } = await submitJob(context.db, { ...retry, workspaceId: auth.workspaceId, retryOf: request.params.jobId });
      context.workers.nudge();
      return reply.code(202).type('application/json; charset=utf-8').send(await getJob(context.db, results, auth, jobId, false));
    },
  );

  app.get(
    '/api/v2/data-ingestion/adapters',
    {
      onRequest: canRead,
      schema: { tags, security, summary: 'List the adapters', response: responses({ 200: Type.Array(AdapterSchema) }, guardedErrors) },
    },
    async () => adapters.map(({ name, format, version }) => ({ name, format, version })),
  );
}
