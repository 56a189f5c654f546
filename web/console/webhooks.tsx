import { useState } from 'preact/hooks';
import { CopyableText } from './clipboard.tsx';
import { FormButtons } from './form-fields.tsx';
import { navigate, useAction, useData } from './hooks.ts';
import type { Webhook, WebhookDelivery, WebhookDeliveryDetail, WebhookEvent, WebhookWithSecret } from './types.ts';
import { Cell, ConfirmButton, DetailPage, ErrorNotice, formatTime, JsonBlock, LoadedView, PagedTable, RequireScope, StatusBadge, useApi } from './ui.tsx';

const webhooksPath = '/api/v2/webhooks';
const pageSize = 20;
// Keyed by the service's own event type, so an event added there fails the typecheck until it is here.
const eventHelp: Record<WebhookEvent, string> = {
  'job.started': 'A worker started the job.',
  'job.progress': 'The job processed more records (at most one every few seconds).',
  'job.completed': 'The job finished; failed records are in its results.',
  'job.failed': 'The job failed as a whole.',
  'job.cancelled': 'The job was cancelled.',
};
const webhookEvents = Object.keys(eventHelp) as WebhookEvent[];
// What a new endpoint subscribes to unless the operator picks otherwise: the end of each job.
const defaultEvents: WebhookEvent[] = ['job.completed', 'job.failed'];

/** A signing secret, shown once (after create and after rotate), with a copy button. */
function SecretPanel({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div class="notice secret-panel" role="region" aria-label="Signing secret">
      <p>
        <strong>Signing secret.</strong> Copy it now: <strong>you will not see it again</strong>. Receivers verify each delivery's{' '}
        <code>webhook-signature</code> with it (Standard Webhooks); a lost secret can only be rotated.
      </p>
      <CopyableText text={secret} kind="secret" what="the secret" />
      <button type="button" class="primary" onClick={onDone}>
        Done, hide it
      </button>
    </div>
  );
}

type WebhookFields = { url: string; events: WebhookEvent[]; description: string };

/** The URL, events and description of an endpoint, for creating or editing it. */
function WebhookForm({ initial, submitLabel, onSubmit, onCancel }: { initial: WebhookFields; submitLabel: string; onSubmit: (fields: WebhookFields) => Promise<boolean>; onCancel?: () => void }) {
  const [fields, setFields] = useState(initial);
  const [sending, setSending] = useState(false);
  const toggle = (event: WebhookEvent, checked: boolean) =>
    setFields({ ...fields, events: webhookEvents.filter((name) => (name === event ? checked : fields.events.includes(name))) });
  return (
    <form
      class="webhook-form"
      onSubmit={async (event) => {
        event.preventDefault();
        setSending(true);
        await onSubmit({ ...fields, url: fields.url.trim(), description: fields.description.trim() });
        setSending(false);
      }}
    >
      <label>
        URL
        <input type="url" name="url" required placeholder="https://example.com/hooks/lore" value={fields.url} onInput={(event) => setFields({ ...fields, url: event.currentTarget.value })} />
      </label>
      <fieldset>
        <legend>Events</legend>
        {webhookEvents.map((name) => (
          <label key={name} class="check" title={eventHelp[name]}>
            <input type="checkbox" name="events" value={name} checked={fields.events.includes(name)} onChange={(event) => toggle(name, event.currentTarget.checked)} />{' '}
            <code>{name}</code>
          </label>
        ))}
      </fieldset>
      <label>
        Description
        <input name="description" placeholder="What receives these events" value={fields.description} onInput={(event) => setFields({ ...fields, description: event.currentTarget.value })} />
      </label>
      <FormButtons busy={sending} label={submitLabel} onCancel={onCancel} disabled={fields.events.length === 0} />
    </form>
  );
}

/** Enabled, or disabled with the reason (an operator's choice, or the failures that made lore stop). */
function EndpointStatus({ webhook }: { webhook: Webhook }) {
  if (webhook.enabled) return <StatusBadge status="enabled" />;
  return (
    <span class="endpoint-status">
      <StatusBadge status="disabled" />
      {webhook.disabledReason ? <span class="muted"> {webhook.disabledReason}</span> : null}
    </span>
  );
}

/** The create form; after creating, the new endpoint's secret until the operator hides it. */
function CreateWebhook({ onCreated }: { onCreated: () => void }) {
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<WebhookWithSecret>();
  const { error, run } = useAction();
  if (created) {
    return (
      <div class="card">
        <p class="notice success" role="status">
          Endpoint <code>{created.url}</code> was created.
        </p>
        <SecretPanel secret={created.secret} onDone={() => setCreated(undefined)} />
      </div>
    );
  }
  if (!open) {
    return (
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        New endpoint
      </button>
    );
  }
  return (
    <div class="card">
      <h3>New endpoint</h3>
      <WebhookForm
        initial={{ url: '', events: defaultEvents, description: '' }}
        submitLabel="Create endpoint"
        onCancel={() => setOpen(false)}
        onSubmit={(fields) =>
          run(async () => {
            const body = { url: fields.url, events: fields.events, ...(fields.description ? { description: fields.description } : {}) };
            setCreated(await api.request<WebhookWithSecret>('POST', webhooksPath, { json: body }));
            setOpen(false);
            onCreated();
          })
        }
      />
      <ErrorNotice error={error} />
    </div>
  );
}

/** The workspace's webhook endpoints, and a form to add one. */
export function WebhooksView() {
  return (
    <section aria-labelledby="webhooks-title">
      <header class="section-header">
        <h2 id="webhooks-title">Webhooks</h2>
      </header>
      <p class="muted">
        lore posts job events to these endpoints, signed with each endpoint's secret; failed deliveries are retried for a day, then the
        endpoint is disabled.
      </p>
      <RequireScope scope="webhooks:read">
        <WebhookList />
      </RequireScope>
    </section>
  );
}

function WebhookList() {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  // Polled: lore disables an endpoint that keeps failing, and the list should say so.
  const webhooks = useData((signal) => api.get<{ total: number; webhooks: Webhook[] }>(webhooksPath, { limit: pageSize, offset }, signal), [offset], () => true);
  return (
    <>
      {api.holds('webhooks:write') ? <CreateWebhook onCreated={webhooks.refresh} /> : null}
      <PagedTable
        loaded={webhooks}
        rowsOf={(answer) => answer.webhooks}
        offset={offset}
        limit={pageSize}
        onOffset={setOffset}
        name="webhooks stack"
        columns={['URL', 'Events', 'Status', 'Description', 'Created']}
        empty="No webhook endpoints yet."
        row={(webhook) => (
          <tr key={webhook.id} data-webhook-id={webhook.id}>
            <Cell label="URL">
              <a href={`#/webhooks/${webhook.id}`} class="url">
                {webhook.url}
              </a>
            </Cell>
            <Cell label="Events">{webhook.events.join(', ')}</Cell>
            <Cell label="Status">
              <EndpointStatus webhook={webhook} />
            </Cell>
            <Cell label="Description">{webhook.description || '—'}</Cell>
            <Cell label="Created">{formatTime(webhook.createdAt)}</Cell>
          </tr>
        )}
      />
    </>
  );
}

/** Edit, disable or enable, rotate the secret, delete. */
function WebhookActions({ webhook, onChanged }: { webhook: Webhook; onChanged: () => void }) {
  const api = useApi();
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string>();
  const { busy, error, run } = useAction();
  const path = `${webhooksPath}/${webhook.id}`;
  const act = async (action: () => Promise<unknown>) => {
    const succeeded = await run(action);
    if (succeeded) onChanged();
    return succeeded;
  };
  return (
    <div class="webhook-actions">
      {editing ? (
        <div class="card">
          <h3>Edit endpoint</h3>
          <WebhookForm
            initial={{ url: webhook.url, events: webhook.events, description: webhook.description ?? '' }}
            submitLabel="Save"
            onCancel={() => setEditing(false)}
            onSubmit={async (fields) => {
              const saved = await act(() => api.request('PATCH', path, { json: fields }));
              if (saved) setEditing(false);
              return saved;
            }}
          />
        </div>
      ) : (
        <div class="actions">
          <button type="button" disabled={busy} onClick={() => setEditing(true)}>
            Edit
          </button>
          <button type="button" disabled={busy} onClick={() => act(() => api.request('PATCH', path, { json: { enabled: !webhook.enabled } }))}>
            {webhook.enabled ? 'Disable' : 'Enable'}
          </button>
          <ConfirmButton
            label="Rotate secret"
            question="Rotate the signing secret? Deliveries from now on are signed with a new secret, which receivers need before they can verify them."
            confirm="Rotate"
            disabled={busy}
            onConfirm={() =>
              // No reload of the endpoint: its polling shows the new updatedAt, and the secret stays on screen.
              run(async () => {
                setSecret((await api.request<WebhookWithSecret>('POST', `${path}/rotate-secret`)).secret);
              })
            }
          />
          <ConfirmButton
            label="Delete"
            question="Delete this endpoint? It receives no more events, and its deliveries are no longer shown."
            confirm="Delete endpoint"
            disabled={busy}
            onConfirm={async () => {
              if (await run(() => api.request('DELETE', path))) navigate('webhooks');
            }}
          />
        </div>
      )}
      {secret ? <SecretPanel secret={secret} onDone={() => setSecret(undefined)} /> : null}
      <ErrorNotice error={error} />
    </div>
  );
}

/** The Redeliver button of a delivery, with the outcome of the last click. */
function Redeliver({ webhookId, delivery, onQueued }: { webhookId: string; delivery: WebhookDelivery; onQueued: () => void }) {
  const api = useApi();
  const { busy, error, run } = useAction();
  const [queued, setQueued] = useState(false);
  return (
    <>
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setQueued(await run(() => api.request('POST', `${webhooksPath}/${webhookId}/deliveries/${delivery.id}/redeliver`)));
          onQueued();
        }}
      >
        Redeliver
      </button>
      {queued ? (
        <span class="muted" role="status">
          {' '}
          queued
        </span>
      ) : null}
      <ErrorNotice error={error} />
    </>
  );
}

function formatLatency(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '—' : `${Math.round(ms)} ms`;
}

/** A delivery's attempt count, opening every attempt and the body sent (`GET …/deliveries/{id}`), read when opened. */
function AttemptLog({ webhookId, delivery }: { webhookId: string; delivery: WebhookDelivery }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="attempt-log" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>{delivery.attempts}</summary>
      {open ? <AttemptList webhookId={webhookId} deliveryId={delivery.id} version={`${delivery.attempts} ${delivery.status}`} /> : null}
    </details>
  );
}

function AttemptList({ webhookId, deliveryId, version }: { webhookId: string; deliveryId: string; version: string }) {
  const api = useApi();
  // Read again when the list shows another attempt or status.
  const detail = useData((signal) => api.get<WebhookDeliveryDetail>(`${webhooksPath}/${webhookId}/deliveries/${deliveryId}`, {}, signal), [deliveryId, version]);
  return (
    <LoadedView loaded={detail}>
      {(value) => (
        <>
          <ol class="attempts">
            {value.attemptLog.map((attempt, index) => (
              <li key={index}>
                {formatTime(attempt.at)}: {attempt.statusCode ?? 'no answer'}, {formatLatency(attempt.latencyMs)}
                {attempt.error ? ` (${attempt.error})` : ''}
              </li>
            ))}
          </ol>
          <JsonBlock value={value.payload} />
        </>
      )}
    </LoadedView>
  );
}

/** An endpoint's deliveries, newest first, live while the page is open. */
function Deliveries({ webhookId }: { webhookId: string }) {
  const api = useApi();
  const [offset, setOffset] = useState(0);
  const deliveries = useData(
    (signal) => api.get<{ total: number; deliveries: WebhookDelivery[] }>(`${webhooksPath}/${webhookId}/deliveries`, { limit: pageSize, offset }, signal),
    [webhookId, offset],
    () => true,
  );
  return (
    <section aria-labelledby="deliveries-title">
      <header class="section-header">
        <h3 id="deliveries-title">Deliveries</h3>
        <button type="button" onClick={deliveries.refresh}>
          Refresh
        </button>
      </header>
      <PagedTable
        loaded={deliveries}
        rowsOf={(answer) => answer.deliveries}
        offset={offset}
        limit={pageSize}
        onOffset={setOffset}
        name="deliveries stack"
        columns={['Created', 'Event', 'Job', 'Status', 'Attempts', 'Last status', 'Latency', 'Error', 'Next attempt', '']}
        empty="No deliveries yet: they appear when a job this endpoint listens to changes state."
        row={(delivery) => (
          <tr key={delivery.id} data-delivery-id={delivery.id}>
            <Cell label="Created">{formatTime(delivery.createdAt)}</Cell>
            <Cell label="Event">
              <code>{delivery.event}</code>
            </Cell>
            <Cell label="Job">{delivery.jobId ? <a href={`#/jobs/${delivery.jobId}`}>{delivery.jobId.slice(0, 8)}</a> : '—'}</Cell>
            <Cell label="Status">
              <StatusBadge status={delivery.status} />
            </Cell>
            <Cell label="Attempts">
              <AttemptLog webhookId={webhookId} delivery={delivery} />
            </Cell>
            <Cell label="Last status">{delivery.lastAttempt?.statusCode ?? '—'}</Cell>
            <Cell label="Latency">{formatLatency(delivery.lastAttempt?.latencyMs)}</Cell>
            <Cell label="Error">{delivery.lastAttempt?.error ?? '—'}</Cell>
            <Cell label="Next attempt">{delivery.status === 'pending' ? formatTime(delivery.nextAttemptAt) : '—'}</Cell>
            <Cell label="Action">{api.holds('webhooks:write') ? <Redeliver webhookId={webhookId} delivery={delivery} onQueued={deliveries.refresh} /> : null}</Cell>
          </tr>
        )}
      />
    </section>
  );
}

/** One endpoint: its settings, its actions and its deliveries. */
export function WebhookView({ webhookId }: { webhookId: string }) {
  const api = useApi();
  const webhook = useData((signal) => api.get<Webhook>(`${webhooksPath}/${webhookId}`, {}, signal), [webhookId], () => true);
  return (
    <DetailPage kind="Webhook" id={webhookId} back={['#/webhooks', 'Webhooks']} loaded={webhook}>
      {(value) => (
        <>
          <dl class="facts">
            <dt>URL</dt>
            <dd class="url">{value.url}</dd>
            <dt>Events</dt>
            <dd>{value.events.join(', ')}</dd>
            <dt>Status</dt>
            <dd>
              <EndpointStatus webhook={value} />
            </dd>
            <dt>Description</dt>
            <dd>{value.description || '—'}</dd>
            <dt>Created / updated</dt>
            <dd>
              {formatTime(value.createdAt)} / {formatTime(value.updatedAt)}
            </dd>
          </dl>
          {api.holds('webhooks:write') ? <WebhookActions webhook={value} onChanged={webhook.refresh} /> : null}
          <Deliveries webhookId={webhookId} />
        </>
      )}
    </DetailPage>
  );
}
