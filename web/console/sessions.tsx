import { useData, useRouteQuery } from './hooks.ts';
import { ApiError } from './api.ts';
import { ToolCallList } from './tool-calls.tsx';
import type { ChatSessionWithMessages, Experience, SessionListItem, SessionMessage } from './types.ts';
import { Cell, DetailPage, ExperienceFilter, ExternalLink, formatTime, JsonBlock, PagedTable, StatusBadge, useApi, useNames } from './ui.tsx';

const sessionsPath = '/api/v2/sessions';
const pageSize = 20;

/**
 * Recent sessions with experience, status, feedback, unanswered and user filters. The filters and
 * the page are the route's query (`#/sessions?feedback=down&unanswered=true`), so a reload or a
 * shared link shows the same list.
 */
export function SessionsView() {
  const api = useApi();
  const { query, set } = useRouteQuery();
  const [experienceId, status, userId, feedback] = ['experienceId', 'status', 'userId', 'feedback'].map((key) => query.get(key) ?? '');
  const unanswered = query.get('unanswered') === 'true';
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  // Any new filter starts from the first page.
  const filter = (changes: Record<string, string>) => set({ ...changes, offset: '' });
  const names = useNames('experiences:read', '/api/v2/experiences', 'experiences');
  const sessions = useData(
    (signal) =>
      api.get<{ total: number; sessions: SessionListItem[] }>(
        sessionsPath,
        { experienceId, status, userId, feedback, unanswered: unanswered || undefined, limit: pageSize, offset },
        signal,
      ),
    [experienceId, status, userId, feedback, unanswered, offset],
  );
  return (
    <section aria-labelledby="sessions-title">
      <header class="section-header">
        <h2 id="sessions-title">Sessions</h2>
        <ExperienceFilter value={experienceId ?? ''} names={names} onChange={(id) => filter({ experienceId: id })} />
        <label>
          Status{' '}
          <select name="status" value={status} onChange={(event) => filter({ status: event.currentTarget.value })}>
            <option value="">all</option>
            <option value="active">active</option>
            <option value="completed">completed</option>
          </select>
        </label>
        <label>
          Feedback{' '}
          <select name="feedback" value={feedback} onChange={(event) => filter({ feedback: event.currentTarget.value })}>
            <option value="">any</option>
            <option value="down">👎 thumbs down</option>
            <option value="up">👍 thumbs up</option>
          </select>
        </label>
        <label class="check">
          <input
            type="checkbox"
            name="unanswered"
            checked={unanswered}
            onChange={(event) => filter({ unanswered: event.currentTarget.checked ? 'true' : '' })}
          />
          Unanswered
        </label>
        <form
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            filter({ userId: String(new FormData(event.currentTarget).get('userId') ?? '').trim() });
          }}
        >
          <input name="userId" placeholder="User id" aria-label="User id" defaultValue={userId} key={userId} />
        </form>
        <button type="button" onClick={sessions.refresh}>
          Refresh
        </button>
      </header>
      <PagedTable
        loaded={sessions}
        rowsOf={(answer) => answer.sessions}
        offset={offset}
        limit={pageSize}
        onOffset={(value) => set({ offset: value ? String(value) : '' })}
        name="sessions stack"
        columns={['First question', 'Experience', 'User', 'Status', 'Questions', 'Last activity']}
        empty="No sessions."
        row={(session) => (
          <tr key={session.id}>
            <Cell label="First question">
              <a href={`#/sessions/${session.id}`}>{session.firstQuestion ?? <span class="muted">No question yet</span>}</a>
            </Cell>
            <Cell label="Experience">{session.experienceName}</Cell>
            <Cell label="User">{session.userId ?? <span class="muted">anonymous</span>}</Cell>
            <Cell label="Status">
              <StatusBadge status={session.status} />
            </Cell>
            <Cell label="Questions">{session.queryCount}</Cell>
            <Cell label="Last activity">{formatTime(session.lastQueryAt ?? session.createdAt)}</Cell>
          </tr>
        )}
      />
    </section>
  );
}

function Message({ message }: { message: SessionMessage }) {
  return (
    <li class="message">
      <div class="muted">
        {formatTime(message.askedAt)} · {message.latencyMs} ms · {message.grounded ? 'grounded' : 'not grounded'}
      </div>
      <p class="question">
        <strong>Q:</strong> {message.text}
      </p>
      {/* The answer is Markdown written from ingested content: shown as text, never as HTML. */}
      <div class="answer">{message.answer}</div>
      {message.sources.length > 0 ? (
        <ol class="sources">
          {message.sources.map((source) => (
            <li key={source.number} value={source.number}>
              <ExternalLink url={source.url}>{source.title}</ExternalLink>{' '}
              <span class="muted">({source.score.toFixed(2)})</span>
            </li>
          ))}
        </ol>
      ) : null}
      <ToolCallList calls={message.toolCalls} />
      <div class="feedback">
        {message.feedback ? (
          <>
            Feedback: <span aria-label={message.feedback.rating === 'up' ? 'thumbs up' : 'thumbs down'}>{message.feedback.rating === 'up' ? '👍' : '👎'}</span>
            {message.feedback.comment ? <span class="comment"> “{message.feedback.comment}”</span> : null}
          </>
        ) : (
          <span class="muted">No feedback</span>
        )}
      </div>
    </li>
  );
}

/**
 * An experience's name linking to its page, as the session list names it; its id when the token
 * lacks `experiences:read` or the experience is deleted (its sessions stay readable).
 */
function ExperienceName({ experienceId }: { experienceId: string }) {
  const api = useApi();
  const experience = useData(
    async (signal) => (api.holds('experiences:read') ? api.get<Experience>(`/api/v2/experiences/${experienceId}`, {}, signal) : undefined),
    [experienceId],
  );
  if (experience.data) return <a href={`#/experiences/${experienceId}`}>{experience.data.name}</a>;
  const deleted = experience.error instanceof ApiError && experience.error.status === 404;
  return (
    <>
      <code>{experienceId}</code>
      {deleted ? <span class="muted"> (deleted)</span> : null}
    </>
  );
}

/** One session's transcript, oldest question first. */
export function SessionView({ sessionId }: { sessionId: string }) {
  const api = useApi();
  const session = useData((signal) => api.get<ChatSessionWithMessages>(`${sessionsPath}/${sessionId}`, {}, signal), [sessionId]);
  return (
    <DetailPage kind="Session" id={sessionId} back={['#/sessions', 'Sessions']} loaded={session}>
      {(value) => (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={value.status} />
            </dd>
            <dt>Experience</dt>
            <dd>
              <ExperienceName experienceId={value.experienceId} />
            </dd>
            <dt>User</dt>
            <dd>{value.userId ?? 'anonymous'}</dd>
            <dt>Started / last question / completed</dt>
            <dd>
              {formatTime(value.createdAt)} / {formatTime(value.lastQueryAt)} / {formatTime(value.completedAt)}
            </dd>
          </dl>
          {Object.keys(value.metadata).length > 0 ? (
            <details>
              <summary>Metadata</summary>
              <JsonBlock value={value.metadata} />
            </details>
          ) : null}
          <h3>Transcript ({value.messages.length})</h3>
          <ol class="transcript">
            {value.messages.map((message) => (
              <Message key={message.queryId} message={message} />
            ))}
          </ol>
        </>
      )}
    </DetailPage>
  );
}
