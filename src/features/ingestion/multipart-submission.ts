import type { FastifyError, FastifyRequest } from 'fastify';
import { AppError, errorTable } from '../../core/errors.ts';
import { inspectJson, refuseProblems } from '../../core/http/input-guard.ts';
import { malformedJsonMessage } from '../../core/http/validation-messages.ts';
import type { UploadedFile } from './adapters/adapter.ts';

const MB = 1024 * 1024;

/**
 * Parts of one multipart submission. 1,000 files of a folder of notes (30 KB each) fill the
 * 30 MB limit; more would be small files in one job that `lore ingest` splits anyway. The text
 * fields are adapterType, knowledgeBaseId, data or manifest: 10 leaves room for a client's extras.
 */
export const MULTIPART_MAX_FILES = 1000;
export const MULTIPART_MAX_FIELDS = 10;

/** The busboy limits the multipart plugin is registered with, from the request limit (MULTIPART_LIMIT_MB). */
export function multipartLimits(limitBytes: number) {
  return {
    fileSize: limitBytes,
    fieldSize: limitBytes,
    files: MULTIPART_MAX_FILES,
    fields: MULTIPART_MAX_FIELDS,
    parts: MULTIPART_MAX_FILES + MULTIPART_MAX_FIELDS,
  };
}

/**
 * A multipart submission: its text fields (and non-`files` file parts, as text) by name, the file
 * names of those file parts by part name, and its `files` parts.
 */
export type MultipartSubmission = { fields: Record<string, string>; fileNames: Record<string, string>; files: UploadedFile[] };

function tooLarge(message: string): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `${errorTable.PAYLOAD_TOO_LARGE.message} ${message}`);
}

/** The 413 of each multipart limit, saying which limit and what to do instead. */
function limitMessages(limitBytes: number) {
  const size = `${Math.round((limitBytes / MB) * 10) / 10} MB`;
  return {
    request: `A multipart request is limited to ${size} in all (files and fields together): split the files into several jobs (lore ingest does).`,
    part: `One file part is limited to ${size}: split the document, or the payload into several jobs of 100 to 500 records.`,
    field: `One text field is limited to ${size}: send a large payload as a file part named data.`,
    files: `A multipart request carries at most ${MULTIPART_MAX_FILES} files: split them into several jobs (lore ingest does).`,
    fields: `A multipart request carries at most ${MULTIPART_MAX_FIELDS} text fields (adapterType, knowledgeBaseId, data or manifest); per-file record fields go in the manifest part.`,
  };
}

/**
 * Reads a multipart body: text fields, file parts named `files` (bytes and file name, directories
 * kept), and any other file part as text (the `data` payload). Every limit answers its own 413:
 * files, fields, one part, and the whole request, whose parts' bytes are counted as they arrive.
 */
export async function readMultipart(request: FastifyRequest, limitBytes: number): Promise<MultipartSubmission> {
  const messages = limitMessages(limitBytes);
  const submission: MultipartSubmission = { fields: {}, fileNames: {}, files: [] };
  let total = 0;
  const repeated = (name: string) => {
    throw new AppError('VALIDATION_FAILED', `The multipart part ${name} is sent twice; send it once.`, { errors: [{ path: `/${name}`, message: 'is sent twice' }] });
  };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const chunks: Buffer[] = [];
        let partBytes = 0;
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          partBytes += chunk.length;
          total += chunk.length;
          if (total > limitBytes && partBytes < limitBytes) throw tooLarge(messages.request);
          chunks.push(chunk);
        }
        if (part.file.truncated) throw tooLarge(messages.part);
        if (total > limitBytes) throw tooLarge(messages.request);
        const bytes = Buffer.concat(chunks);
        if (part.fieldname === 'files') submission.files.push({ name: part.filename, bytes });
        else if (part.fieldname in submission.fields) repeated(part.fieldname);
        else {
          submission.fields[part.fieldname] = bytes.toString('utf8');
          if (part.filename) submission.fileNames[part.fieldname] = part.filename;
        }
      } else {
        if (part.valueTruncated) throw tooLarge(messages.field);
        const value = String(part.value);
        total += Buffer.byteLength(value);
        if (total > limitBytes) throw tooLarge(messages.request);
        if (part.fieldname === 'files') {
          throw new AppError('VALIDATION_FAILED', 'The multipart part files must be a file (a part with a filename).', {
            errors: [{ path: '/files', message: 'must be a file part with a filename' }],
          });
        }
        if (part.fieldname in submission.fields) repeated(part.fieldname);
        submission.fields[part.fieldname] = value;
      }
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    switch ((error as FastifyError).code) {
      case 'FST_FILES_LIMIT':
        throw tooLarge(messages.files);
      case 'FST_FIELDS_LIMIT':
      case 'FST_PARTS_LIMIT':
        throw tooLarge(messages.fields);
      case 'FST_REQ_FILE_TOO_LARGE':
        throw tooLarge(messages.part);
    }
    // What is left is a body busboy cannot parse (no boundary, a truncated body): the client's error.
    if ((error as FastifyError).statusCode) throw error;
    throw new AppError('MALFORMED_MULTIPART', `${errorTable.MALFORMED_MULTIPART.message} ${(error as Error).message}.`);
  }
  return submission;
}

/** A JSON text part (`data`, `manifest`) parsed, with the same rules as a JSON body; 400 with `path` when it is not JSON. */
export function parseJsonPart(text: string, path: string, expected: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('VALIDATION_FAILED', malformedJsonMessage(text, `The multipart ${path.slice(1)} part`), {
      errors: [{ path, message: expected }],
    });
  }
  const problems = inspectJson(value, { repairText: true });
  refuseProblems(problems.map((problem) => ({ ...problem, path: `${path}${problem.path === '/' ? '' : problem.path}` })));
  return value;
}
