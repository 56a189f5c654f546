import type { FastifyError, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import multipart from '@fastify/multipart';
import type { AppContext } from '../../core/context.ts';
import { AppError, errorTable } from '../../core/errors.ts';
import { inspectJson, refuseProblems } from '../../core/http/input-guard.ts';
import type { App } from '../../core/http/app-types.ts';
import { guardedErrors, responses } from '../../core/http/schemas.ts';
import { assertKnowledgeBaseAllowed, authorize, caller } from '../auth/guard.ts';
import { getKnowledgeBase } from '../knowledge-bases/knowledge-bases.service.ts';
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
import { cancelJob, getJob, listJobs, submitJob } from './jobs.service.ts';

const security = [{ bearerAuth: [] }];
const tags = ['data-ingestion'];
const MB = 1024 * 1024;
// Per API process: 100 jobs of 5,000 records (670 KB of results each), or five of 100,000.
const RESULTS_CACHE_BYTES = 64 * MB;

type Submission = { adapterType?: unknown; knowledgeBaseId?: unknown; data?: unknown; dataText?: string };

/** The text fields and files of a multipart body, by field name. */
async function readParts(request: FastifyRequest): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      fields[part.fieldname] = part.type === 'file' ? (await part.toBuffer()).toString('utf8') : String(part.value);
    }
  } catch (error) {
    // The limits answer 413 with their own codes; what is left is a body busboy cannot parse
    // (no boundary, a truncated body), which is the client's error.
    if ((error as FastifyError).statusCode) throw error;
    throw new AppError('MALFORMED_MULTIPART', `${errorTable.MALFORMED_MULTIPART.message} ${(error as Error).message}.`);
  }
  return fields;
}

/** Reads a multipart submission: text fields, and `data` as a file part or a text field. */
async function readMultipart(request: FastifyRequest): Promise<Submission> {
  const fields = await readParts(request);
  const submission: Submission = { adapterType: fields.adapterType, knowledgeBaseId: fields.knowledgeBaseId };
  if (fields.data !== undefined) {
    try {
      submission.data = JSON.parse(fields.data);
    } catch (error) {
      throw new AppError('VALIDATION_FAILED', `The multipart data part is not JSON: ${(error as Error).message}`, {
        errors: [{ path: '/data', message: 'must be a JSON file or a JSON string' }],
      });
    }
    // The same rules as a JSON body's `data`. The upload's own text is stored (no second
    // serialization of up to 30 MB) unless it escapes a NUL or a surrogate, which a repair may change.
    const problems = inspectJson(submission.data, { repairText: true });
    refuseProblems(problems.map((problem) => ({ ...problem, path: `/data${problem.path === '/' ? '' : problem.path}` })));
    if (!/\\u(0000|d[89a-f])/i.test(fields.data)) submission.dataText = fields.data;
  }
  return submission;
}

function requireFields(submission: Submission): { adapterType: string; knowledgeBaseId: string; data: unknown; dataText?: string } {
  const errors = [];
  if (typeof submission.adapterType !== 'string' || submission.adapterType === '') errors.push({ path: '/adapterType', message: 'is required' });
  if (submission.data === undefined || submission.data === null) errors.push({ path: '/data', message: 'is required' });
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  if (typeof submission.knowledgeBaseId !== 'string' || !uuid.test(submission.knowledgeBaseId)) {
    errors.push({ path: '/knowledgeBaseId', message: 'must be a UUID' });
  }
  if (errors.length > 0) throw new AppError('VALIDATION_FAILED', `${errors[0]!.path} ${errors[0]!.message}`, { errors });
  return submission as { adapterType: string; knowledgeBaseId: string; data: unknown; dataText?: string };
}

/** The data-ingestion API: submit, list, get and cancel jobs; list adapters. */
export async function registerIngestionRoutes(app: App, context: AppContext): Promise<void> {
  const canRead = authorize(context, ['data-ingestion:read']);
  const canWrite = authorize(context, ['data-ingestion:write']);
  const { jsonBodyLimitBytes, multipartLimitBytes } = context.config;
  const results = new JobResultsCache(RESULTS_CACHE_BYTES);
  await app.register(multipart, {
    limits: { fileSize: multipartLimitBytes, fieldSize: multipartLimitBytes, files: 1, fields: 10, parts: 12 },
    throwFileSizeLimit: true,
  });

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
      const submission = requireFields(request.isMultipart() ? await readMultipart(request) : ((request.body ?? {}) as Submission));
      const adapter = findAdapter(submission.adapterType);
      if (!adapter) {
        throw new AppError('VALIDATION_FAILED', `Unknown adapterType ${submission.adapterType}; known: ${adapters.map((a) => a.name).join(', ')}.`, {
          errors: [{ path: '/adapterType', message: `must be one of: ${adapters.map((a) => a.name).join(', ')}` }],
        });
      }
      const issues = adapter.validate(submission.data);
      if (issues.length > 0) {
        const [first] = issues;
        throw new AppError('VALIDATION_FAILED', `The payload does not match the ${adapter.name} schema: ${first!.path} ${first!.message}`, { errors: issues });
      }
      assertKnowledgeBaseAllowed(auth, submission.knowledgeBaseId);
      const knowledgeBase = await getKnowledgeBase(context.db, auth.workspaceId, submission.knowledgeBaseId);
      const { embedder } = context;
      if (knowledgeBase.embedding && (knowledgeBase.embedding.provider !== embedder.name || knowledgeBase.embedding.model !== embedder.model)) {
        throw new AppError(
          'CONFLICT',
          `The knowledge base holds vectors of ${knowledgeBase.embedding.provider}/${knowledgeBase.embedding.model}, ` +
            `but this service embeds with ${embedder.name}/${embedder.model}; vectors of different models cannot be mixed.`,
        );
      }
      const submitted = await submitJob(context.db, {
        workspaceId: auth.workspaceId,
        knowledgeBaseId: knowledgeBase.id,
        adapter,
        adapterType: submission.adapterType,
        data: submission.data,
        payloadText: submission.dataText,
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
        summary: 'List the workspace\'s ingestion jobs, newest first',
        querystring: ListJobsQuery,
        response: responses({ 200: Type.Object({ total: Type.Integer(), jobs: Type.Array(JobSchema) }) }, guardedErrors),
      },
    },
    // The bodies are JSON text already (see job-results.ts): sent as they are, not serialized again.
    async (request, reply) => reply.type('application/json; charset=utf-8').send(await listJobs(context.db, results, caller(request).workspaceId, request.query)),
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
      reply.type('application/json; charset=utf-8').send(await getJob(context.db, results, caller(request).workspaceId, request.params.jobId, request.query.includePayload)),
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
      await cancelJob(context.db, caller(request).workspaceId, request.params.jobId);
      return reply.code(204).send();
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
