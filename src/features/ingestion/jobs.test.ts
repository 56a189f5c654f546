import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { fakeEmbeddingsEnv, startFakeOpenAi, type FakeOpenAi } from '../../../test/fake-openai.ts';
import { engine, startTestServer, type TestServer } from '../../../test/harness.ts';
import { createKnowledgeBase, submit, waitForJob } from '../../../test/ingestion.ts';
import { assertError } from '../../../test/assert-error.ts';

const JOBS = '/api/v2/data-ingestion/jobs';

const records = [
  { id: 'a', title: 'Alpha', content: 'Alpha is the first letter of the Greek alphabet.' },
  { id: 'b', content: 'Beta comes second.', tags: ['greek'] },
];

describe(`data-ingestion contract (${engine})`, () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let token: string;
  let workspaceId: string;
  let knowledgeBaseId: string;

  before(async () => {
    fake = await startFakeOpenAi();
    // A 64 KB JSON limit lets the 413 test send a small body.
    server = await startTestServer({ ...fakeEmbeddingsEnv(fake), JSON_BODY_LIMIT_MB: '0.0625', MULTIPART_LIMIT_MB: '0.0625' });
    ({ workspaceId, token } = await server.tenant());
    knowledgeBaseId = await createKnowledgeBase(server, token);
  });
  after(async () => {
    await server.close();
    await fake.close();
  });

  test('POST a JSON job answers 202 {jobId, status: pending} and the job completes', async () => {
    const answer = await server.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId, data: { records } } });
    assert.equal(answer.status, 202);
    assert.deepEqual(Object.keys(answer.body).sort(), ['jobId', 'status']);
    assert.equal(answer.body.status, 'pending');
    const job = await waitForJob(server, token, answer.body.jobId);
    assert.equal(job.status, 'completed');
    assert.equal(job.id, answer.body.jobId);
    assert.equal(job.data.adapterType, 'generic-json');
    assert.match(job.data.adapterId, /^generic-json@/);
    assert.equal(job.data.recordCount, 2);
    assert.deepEqual(job.data.progress, { processed: 2, total: 2, successful: 2, failed: 0, skipped: 0 });
    assert.deepEqual(job.data.results.map((r: any) => [r.sourceId, r.status, r.action]), [['a', 'success', 'created'], ['b', 'success', 'created']]);
    for (const result of job.data.results) {
      assert.match(result.entryId, /^[0-9a-f-]{36}$/);
      assert.equal(result.embeddingCount, 1);
    }
    assert.match(job.result.sourceId, /^[0-9a-f-]{36}$/);
    assert.equal(job.result.entriesCreated, 2);
    assert.equal(job.result.entriesSkipped, 0);
    assert.equal(job.result.entriesDeleted, 0);
    assert.equal(job.result.embeddingsGenerated, 2);
    assert.equal(job.result.error, undefined);
    for (const field of ['created_at', 'started_at', 'completed_at']) assert.ok(!Number.isNaN(Date.parse(job[field])), field);
    assert.equal(job.payload, undefined);
  });

  test('POST multipart with a JSON file part, and with a JSON text field, answers 202', async () => {
    const file = new FormData();
    file.set('adapterType', 'generic-json');
    file.set('knowledgeBaseId', knowledgeBaseId);
    file.set('data', new Blob([JSON.stringify({ records: [{ id: 'm1', content: 'From a multipart file.' }] })], { type: 'application/json' }), 'data.json');
    const fromFile = await server.request('POST', JOBS, { token, raw: file });
    assert.equal(fromFile.status, 202, fromFile.text);
    const text = new FormData();
    text.set('adapterType', 'generic-json');
    text.set('knowledgeBaseId', knowledgeBaseId);
    text.set('data', JSON.stringify({ records: [{ id: 'm2', content: 'From a multipart text field.' }] }));
    const fromText = await server.request('POST', JOBS, { token, raw: text });
    assert.equal(fromText.status, 202, fromText.text);
    for (const jobId of [fromFile.body.jobId, fromText.body.jobId]) {
      const job = await waitForJob(server, token, jobId);
      assert.equal(job.status, 'completed');
      assert.equal(job.data.results[0].status, 'success');
    }
  });

  test('400: malformed JSON', async () => {
    const answer = await server.request('POST', JOBS, { token, raw: '{"adapterType": "generic-json",', headers: { 'content-type': 'application/json' } });
    assertError(answer, 400, '/v2/data-ingestion/jobs');
    assert.match(answer.body.message, /JSON/);
  });

  test('400: adapterType or data missing, with errors pointing at them', async () => {
    const noAdapter = await server.request('POST', JOBS, { token, body: { knowledgeBaseId, data: { records } } });
    assertError(noAdapter, 400, '/v2/data-ingestion/jobs');
    assert.ok(noAdapter.body.errors.some((e: any) => e.path === '/adapterType'), noAdapter.text);
    const noData = await server.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId } });
    assertError(noData, 400, '/v2/data-ingestion/jobs');
    assert.ok(noData.body.errors.some((e: any) => e.path === '/data'), noData.text);
  });

  test('400: unknown adapterType', async () => {
    const answer = await server.request('POST', JOBS, { token, body: { adapterType: 'csv', knowledgeBaseId, data: { records } } });
    assertError(answer, 400, '/v2/data-ingestion/jobs');
    assert.match(answer.body.message, /csv/);
    assert.deepEqual(answer.body.errors[0].path, '/adapterType');
  });

  test('400: payload not matching the adapter schema points at the offending record', async () => {
    const bad = Array.from({ length: 20 }, (_, index) => ({ id: `r${index}`, content: `record ${index}` })) as any[];
    delete bad[17].content;
    bad[3].contentType = 'video';
    const answer = await server.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId, data: { records: bad } } });
    assertError(answer, 400, '/v2/data-ingestion/jobs');
    const paths = answer.body.errors.map((e: any) => e.path);
    assert.ok(paths.includes('/records/17/content'), paths.join(','));
    assert.ok(paths.includes('/records/3/contentType'), paths.join(','));
  });

  test('400: the multipart data part is not JSON', async () => {
    const form = new FormData();
    form.set('adapterType', 'generic-json');
    form.set('knowledgeBaseId', knowledgeBaseId);
    form.set('data', new Blob(['records: [not json'], { type: 'application/json' }), 'data.json');
    const answer = await server.request('POST', JOBS, { token, raw: form });
    assertError(answer, 400, '/v2/data-ingestion/jobs');
    assert.equal(answer.body.message, 'The multipart data part is not valid JSON: unexpected token \'r\' near "records: [not json".');
  });

  test('401: no Authorization header; malformed, expired or badly signed token', async () => {
    assertError(await server.request('GET', JOBS), 401, '/v2/data-ingestion/jobs');
    assertError(await server.request('POST', JOBS, { body: {} }), 401, '/v2/data-ingestion/jobs');
    assertError(await server.request('GET', JOBS, { token: 'not-a-jwt' }), 401, '/v2/data-ingestion/jobs');
    const secret = new TextEncoder().encode('test-token-secret-0123456789-0123456789');
    const expired = await new SignJWT({ ws: workspaceId, cid: workspaceId, scope: '*' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('lore')
      .setSubject('x')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(secret);
    assertError(await server.request('GET', JOBS, { token: expired }), 401, '/v2/data-ingestion/jobs');
    const [header, payload] = token.split('.');
    assertError(await server.request('GET', JOBS, { token: `${header}.${payload}.AAAA` }), 401, '/v2/data-ingestion/jobs');
  });

  test('403: missing data-ingestion scopes, with required and missing', async () => {
    const readOnly = await server.token(workspaceId, ['data-ingestion:read']);
    const post = await server.request('POST', JOBS, { token: readOnly, body: { adapterType: 'generic-json', knowledgeBaseId, data: { records } } });
    assertError(post, 403, '/v2/data-ingestion/jobs');
    assert.deepEqual(post.body.required, ['data-ingestion:write']);
    assert.deepEqual(post.body.missing, ['data-ingestion:write']);
    const writeOnly = await server.token(workspaceId, ['data-ingestion:write']);
    for (const path of [JOBS, `${JOBS}/00000000-0000-4000-8000-000000000000`, '/api/v2/data-ingestion/adapters']) {
      const answer = await server.request('GET', path, { token: writeOnly });
      assertError(answer, 403, path.slice(4));
      assert.deepEqual(answer.body.missing, ['data-ingestion:read']);
    }
    const cancel = await server.request('DELETE', `${JOBS}/00000000-0000-4000-8000-000000000000`, { token: readOnly });
    assertError(cancel, 403, '/v2/data-ingestion/jobs/00000000-0000-4000-8000-000000000000');
    assert.deepEqual(cancel.body.missing, ['data-ingestion:write']);
  });

  test('403: a token restricted to other knowledge bases cannot ingest into this one', async () => {
    const other = await createKnowledgeBase(server, token);
    const restricted = await server.token(workspaceId, ['data-ingestion:write'], { knowledgeBaseIds: [other] });
    const answer = await server.request('POST', JOBS, { token: restricted, body: { adapterType: 'generic-json', knowledgeBaseId, data: { records } } });
    assertError(answer, 403, '/v2/data-ingestion/jobs');
  });

  test('404: knowledge base missing, or in another workspace; job missing or in another workspace', async () => {
    const missing = await server.request('POST', JOBS, {
      token,
      body: { adapterType: 'generic-json', knowledgeBaseId: '00000000-0000-4000-8000-000000000000', data: { records } },
    });
    assertError(missing, 404, '/v2/data-ingestion/jobs');
    const otherTenant = await server.tenant();
    const foreignKb = await createKnowledgeBase(server, otherTenant.token);
    const foreign = await server.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId: foreignKb, data: { records } } });
    assertError(foreign, 404, '/v2/data-ingestion/jobs');

    const jobId = await submit(server, token, knowledgeBaseId, [{ id: 'iso', content: 'isolated' }]);
    for (const [method, path] of [['GET', `${JOBS}/${jobId}`], ['DELETE', `${JOBS}/${jobId}`], ['GET', `${JOBS}/00000000-0000-4000-8000-000000000000`]]) {
      assertError(await server.request(method!, path!, { token: otherTenant.token }), 404, path!.slice(4));
    }
    const list = await server.request('GET', JOBS, { token: otherTenant.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 0);
    assert.deepEqual(list.body.jobs, []);
    assert.equal((await waitForJob(server, token, jobId)).status, 'completed');
  });

  test('409: cancelling a completed or failed job', async () => {
    const jobId = await submit(server, token, knowledgeBaseId, [{ id: 'done', content: 'finished soon' }]);
    await waitForJob(server, token, jobId);
    const conflict = await server.request('DELETE', `${JOBS}/${jobId}`, { token });
    assertError(conflict, 409, `/v2/data-ingestion/jobs/${jobId}`);
    assert.equal((await server.request('GET', `${JOBS}/${jobId}`, { token })).body.status, 'completed');

    fake.failWith = 500;
    try {
      const failedId = await submit(server, token, knowledgeBaseId, [{ id: 'doomed', content: 'the embedder is down' }]);
      const failed = await waitForJob(server, token, failedId);
      assert.equal(failed.status, 'failed');
      assert.equal(typeof failed.result.error, 'string');
      assert.ok(failed.result.error.length > 0);
      assertError(await server.request('DELETE', `${JOBS}/${failedId}`, { token }), 409, `/v2/data-ingestion/jobs/${failedId}`);
    } finally {
      fake.failWith = undefined;
    }
  });

  test('413: a JSON body over the limit says to use multipart or split; a multipart file over the limit too', async () => {
    const big = Array.from({ length: 400 }, (_, index) => ({ id: `big${index}`, content: 'x'.repeat(200) }));
    const answer = await server.request('POST', JOBS, { token, body: { adapterType: 'generic-json', knowledgeBaseId, data: { records: big } } });
    assertError(answer, 413, '/v2/data-ingestion/jobs');
    assert.match(answer.body.message, /multipart/);
    assert.match(answer.body.message, /split/);
    const form = new FormData();
    form.set('adapterType', 'generic-json');
    form.set('knowledgeBaseId', knowledgeBaseId);
    form.set('data', new Blob([JSON.stringify({ records: big })], { type: 'application/json' }), 'data.json');
    assertError(await server.request('POST', JOBS, { token, raw: form }), 413, '/v2/data-ingestion/jobs');
  });

  test('GET jobs: newest first, status filter, dates, includePayload; out-of-range parameters are 400', async () => {
    const tenant = await server.tenant();
    const kb = await createKnowledgeBase(server, tenant.token);
    const first = await submit(server, tenant.token, kb, [{ id: 'one', content: 'first job' }]);
    await waitForJob(server, tenant.token, first);
    const between = new Date().toISOString();
    const second = await submit(server, tenant.token, kb, [{ id: 'two', content: 'second job' }]);
    await waitForJob(server, tenant.token, second);

    const list = await server.request('GET', JOBS, { token: tenant.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 2);
    assert.deepEqual(list.body.jobs.map((job: any) => job.id), [second, first]);
    assert.equal(list.body.jobs[0].payload, undefined);

    const page = await server.request('GET', `${JOBS}?limit=1&offset=1`, { token: tenant.token });
    assert.equal(page.body.total, 2);
    assert.deepEqual(page.body.jobs.map((job: any) => job.id), [first]);

    const withPayload = await server.request('GET', `${JOBS}?includePayload=true`, { token: tenant.token });
    assert.deepEqual(withPayload.body.jobs[1].payload, { records: [{ id: 'one', content: 'first job' }] });
    const one = await server.request('GET', `${JOBS}/${second}?includePayload=true`, { token: tenant.token });
    assert.deepEqual(one.body.payload, { records: [{ id: 'two', content: 'second job' }] });

    const after = await server.request('GET', `${JOBS}?startDate=${encodeURIComponent(between)}`, { token: tenant.token });
    assert.deepEqual(after.body.jobs.map((job: any) => job.id), [second]);
    const before = await server.request('GET', `${JOBS}?endDate=${encodeURIComponent(between)}`, { token: tenant.token });
    assert.deepEqual(before.body.jobs.map((job: any) => job.id), [first]);

    const completed = await server.request('GET', `${JOBS}?status=completed`, { token: tenant.token });
    assert.equal(completed.body.total, 2);
    const pending = await server.request('GET', `${JOBS}?status=pending`, { token: tenant.token });
    assert.equal(pending.body.total, 0);
    assert.equal((await server.request('GET', `${JOBS}?status=cancelled`, { token: tenant.token })).status, 200);

    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'status=done', 'startDate=yesterday', 'limit=abc']) {
      assertError(await server.request('GET', `${JOBS}?${query}`, { token: tenant.token }), 400, '/v2/data-ingestion/jobs');
    }
    assertError(await server.request('GET', `${JOBS}/not-a-uuid`, { token: tenant.token }), 400, '/v2/data-ingestion/jobs/not-a-uuid');
  });

  test('GET a job follows every change of it: results written by any process, completion, cancellation; the list agrees; other workspaces get 404', async () => {
    // A job held by a worker of another process (an unexpired lease this server's worker leaves
    // alone), whose results are written here with SQL as that worker's transactions would.
    const template = await submit(server, token, knowledgeBaseId, [{ id: 'template', content: 'gives the job a data source' }]);
    await waitForJob(server, token, template);
    const submitted = { records: [{ id: 'r0', content: 'zero' }, { id: 'r1', content: 'one' }, { id: 'r2', content: 'two' }] };
    const { rows } = await server.context.db.query<{ id: string; source_id: string; adapter_id: string }>(
      `INSERT INTO ingestion_jobs (workspace_id, knowledge_base_id, source_id, adapter_type, adapter_id, record_count, payload,
         status, lease_owner, lease_expires_at, started_at)
       SELECT workspace_id, knowledge_base_id, source_id, adapter_type, adapter_id, 3, $2::jsonb,
         'processing', 'another-process', now() + interval '1 hour', now()
       FROM ingestion_jobs WHERE id = $1 RETURNING id, source_id, adapter_id`,
      [template, JSON.stringify(submitted)],
    );
    const { id: jobId, source_id: sourceId, adapter_id: adapterId } = rows[0]!;
    const writeResult = (ordinal: number, status: string, fields: { action?: string; reason?: string; entryId?: string; embeddings?: number; error?: string }) =>
      server.context.db.query(
        `INSERT INTO ingestion_job_results (job_id, workspace_id, ordinal, record_id, status, action, reason, entry_id, embedding_count, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [jobId, workspaceId, ordinal, `r${ordinal}`, status, fields.action ?? null, fields.reason ?? null, fields.entryId ?? null, fields.embeddings ?? 0, fields.error ?? null],
      );
    const path = `${JOBS}/${jobId}`;
    const get = async () => {
      const answer = await server.request('GET', path, { token });
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.headers.get('content-type')!, /^application\/json/);
      return answer;
    };
    const entryId = '6f1c2d3e-4a5b-4c6d-8e7f-8091a2b3c4d5';
    const success = { sourceId: 'r0', status: 'success', entryId, embeddingCount: 2, action: 'created' };
    const failure = { sourceId: 'r1', status: 'failed', entryId: null, embeddingCount: 0, error: 'the embedder is down' };
    const duplicate = { sourceId: 'r2', status: 'skipped', entryId, embeddingCount: 0, reason: 'duplicate', duplicateOf: entryId };
    const first = (await get()).body;
    /** The whole body the spec and JobSchema give for this job in `status` with `results`. */
    const expected = (status: string, results: any[], eta: unknown, completedAt: unknown) => {
      const count = (wanted: string) => results.filter((result) => result.status === wanted).length;
      return {
        id: jobId,
        status,
        data: {
          adapterId,
          adapterType: 'generic-json',
          knowledgeBaseId,
          recordCount: 3,
          fileName: null,
          retryOf: null,
          progress: { processed: results.length, total: 3, successful: count('success'), failed: count('failed'), skipped: count('skipped') },
          eta,
          timings: {},
          results,
        },
        result: {
          sourceId,
          entriesCreated: results.filter((result) => result.action === 'created').length,
          entriesUpdated: 0,
          entriesSkipped: count('skipped'),
          entriesDeleted: 0,
          entriesFailed: count('failed'),
          embeddingsGenerated: results.reduce((sum, result) => sum + result.embeddingCount, 0),
        },
        created_at: first.created_at,
        started_at: first.started_at,
        completed_at: completedAt,
      };
    };
    const etaOf = (body: any) => {
      assert.equal(typeof body.data.eta.recordsPerSecond, 'number');
      assert.equal(typeof body.data.eta.secondsRemaining, 'number');
      return body.data.eta;
    };
    assert.deepEqual(first, expected('processing', [], null, null));
    for (const field of ['created_at', 'started_at'] as const) assert.ok(!Number.isNaN(Date.parse(first[field])), field);

    await writeResult(0, 'success', { action: 'created', entryId, embeddings: 2 });
    let body = (await get()).body;
    assert.deepEqual(body, expected('processing', [success], etaOf(body), null));

    // Out of order, as a batch's skipped and failed records are written before its entries.
    await writeResult(2, 'skipped', { reason: 'duplicate', entryId });
    await writeResult(1, 'failed', { error: 'the embedder is down' });
    body = (await get()).body;
    assert.deepEqual(body, expected('processing', [success, failure, duplicate], etaOf(body), null));

    // No statement of lore updates a result row; were one to, the next GET would still show it.
    await server.context.db.query('UPDATE ingestion_job_results SET embedding_count = 5 WHERE job_id = $1 AND ordinal = 0', [jobId]);
    body = (await get()).body;
    assert.deepEqual(body, expected('processing', [{ ...success, embeddingCount: 5 }, failure, duplicate], etaOf(body), null));
    await server.context.db.query('UPDATE ingestion_job_results SET embedding_count = 2 WHERE job_id = $1 AND ordinal = 0', [jobId]);

    assert.equal((await server.request('DELETE', path, { token })).status, 204);
    const cancelled = await get();
    assert.equal(typeof cancelled.body.completed_at, 'string');
    assert.deepEqual(cancelled.body, expected('cancelled', [success, failure, duplicate], null, cancelled.body.completed_at));
    // An unchanged job's results are served as serialized before, without reading them again.
    const { db } = server.context;
    const query = db.query;
    let resultReads = 0;
    db.query = ((text: string, values?: readonly unknown[]) => {
      if (text.includes('FROM ingestion_job_results WHERE workspace_id')) resultReads += 1;
      return query.call(db, text, values);
    }) as typeof db.query;
    try {
      assert.equal((await get()).text, cancelled.text);
    } finally {
      db.query = query;
    }
    assert.equal(resultReads, 0);
    // A worker's transaction that passed its lease check before the cancel may commit after it
    // (here: its row taken away, the job read, then the row written again).
    await server.context.db.query(`DELETE FROM ingestion_job_results WHERE job_id = $1 AND ordinal = 2`, [jobId]);
    assert.deepEqual((await get()).body, expected('cancelled', [success, failure], null, cancelled.body.completed_at));
    await writeResult(2, 'skipped', { reason: 'duplicate', entryId });
    assert.deepEqual((await get()).body, cancelled.body);

    const listed = await server.request('GET', `${JOBS}?limit=100`, { token });
    assert.deepEqual(listed.body.jobs.find((job: any) => job.id === jobId), cancelled.body);
    const withPayload = await server.request('GET', `${path}?includePayload=true`, { token });
    assert.deepEqual(withPayload.body, { ...cancelled.body, payload: submitted });
    assert.deepEqual(Object.keys(withPayload.body), ['id', 'status', 'data', 'result', 'payload', 'created_at', 'started_at', 'completed_at']);

    // Completion: the job row changes, its results do not.
    await server.context.db.query(`UPDATE ingestion_jobs SET status = 'completed' WHERE id = $1`, [jobId]);
    assert.deepEqual((await get()).body, expected('completed', [success, failure, duplicate], null, cancelled.body.completed_at));

    const otherTenant = await server.tenant();
    assertError(await server.request('GET', path, { token: otherTenant.token }), 404, path.slice(4));
    assertError(await server.request('GET', `${path}?includePayload=true`, { token: otherTenant.token }), 404, path.slice(4));
    assert.deepEqual((await server.request('GET', JOBS, { token: otherTenant.token })).body, { total: 0, jobs: [] });
  });

  test('GET adapters lists generic-json, content-hub and files', async () => {
    const answer = await server.request('GET', '/api/v2/data-ingestion/adapters', { token });
    assert.equal(answer.status, 200);
    assert.deepEqual(
      answer.body.map((adapter: any) => [adapter.name, adapter.format]),
      [['generic-json', 'json'], ['content-hub', 'content-hub-json'], ['files', 'multipart']],
    );
    for (const adapter of answer.body) assert.match(adapter.version, /^\d+\.\d+\.\d+$/);
  });
});
