import { DailyChart } from './charts.tsx';
import { useData, useRouteQuery } from './hooks.ts';
import type { Insights } from './types.ts';
import { ExperienceFilter, formatTime, LoadedView, useApi, useNames } from './ui.tsx';

const DAY_MS = 86_400_000;
const dayOf = (time: number) => new Date(time).toISOString().slice(0, 10);

/** The API's default period, the last 30 days (UTC), shown in the date fields. */
function lastThirtyDays(): { from: string; to: string } {
  const today = Date.parse(dayOf(Date.now()));
  return { from: dayOf(today - 29 * DAY_MS), to: dayOf(today) };
}

const percent = (share: number | null) => (share === null ? '—' : `${Math.round(share * 1000) / 10}%`);
const milliseconds = (value: number | null) => (value === null ? '—' : `${value} ms`);

// The console's accent, good and bad colours (styles.ts); a canvas cannot read CSS variables.
const colours = { queries: '#3156d3', answered: '#1f8a4c', fallback: '#c2362b', latency: '#a66a00' };

function Tiles({ totals }: { totals: Insights['totals'] }) {
  const tiles: Array<[string, string]> = [
    ['Queries', String(totals.queries)],
    ['Answered', percent(totals.answeredShare)],
    ['Fallback', percent(totals.fallbackShare)],
    ['Feedback', `👍 ${totals.feedbackUp} · 👎 ${totals.feedbackDown}`],
    ['Median latency', milliseconds(totals.medianLatencyMs)],
  ];
  return (
    <dl class="tiles">
      {tiles.map(([label, value]) => (
        <div class="tile" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function Charts({ days }: { days: Insights['days'] }) {
  const dates = days.map((day) => day.date);
  return (
    <div class="charts">
      <DailyChart title="Queries per day" days={dates} series={[{ label: 'Queries', color: colours.queries, values: days.map((day) => day.queries) }]} formatValue={String} />
      <DailyChart
        title="Answered and fallback share per day"
        days={dates}
        series={[
          { label: 'Answered', color: colours.answered, values: days.map((day) => day.answeredShare) },
          { label: 'Fallback', color: colours.fallback, values: days.map((day) => day.fallbackShare) },
        ]}
        formatValue={percent}
        max={1}
      />
      <DailyChart
        title="Median latency per day"
        days={dates}
        series={[{ label: 'Median latency', color: colours.latency, values: days.map((day) => day.medianLatencyMs) }]}
        formatValue={milliseconds}
      />
    </div>
  );
}

function ContentGaps({ gaps }: { gaps: Insights['gaps'] }) {
  return (
    <section aria-labelledby="gaps-title">
      <h3 id="gaps-title">Content gaps ({gaps.groups.length})</h3>
      <p class="muted">
        {gaps.considered} unanswered or 👎 questions, grouped by meaning
        {gaps.truncated ? ` (the most recent ${gaps.limit} of the period)` : ''}. Each example links to its session.
      </p>
      {gaps.groups.length === 0 ? <p class="muted">No content gaps in this period.</p> : null}
      <ol class="gaps">
        {gaps.groups.map((gap) => (
          <li class="gap" key={`${gap.question} ${gap.lastAskedAt}`}>
            <div class="gap-title">
              <strong>{gap.question}</strong> <span class="badge">{gap.count}×</span>
            </div>
            <div class="muted">
              {gap.unanswered} unanswered · {gap.thumbsDown} 👎 · last asked {formatTime(gap.lastAskedAt)}
            </div>
            <ul class="gap-examples">
              {gap.examples.map((example) => (
                <li key={example.sessionId + example.text}>
                  <a href={`#/sessions/${example.sessionId}`}>{example.text}</a> <span class="muted">{formatTime(example.askedAt)}</span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ol>
    </section>
  );
}

const isDay = (value: string | null): value is string => value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value);

/**
 * Figures of an experience (or all) over a period: totals, charts per day, and the content gaps.
 * The experience and the period are the route's query (`#/insights?experienceId=…&from=…&to=…`),
 * so a reload or a shared link shows the same view; without dates, the last 30 days.
 */
export function InsightsView() {
  const api = useApi();
  const names = useNames('experiences:read', '/api/v2/experiences', 'experiences');
  const { query, set } = useRouteQuery();
  const experienceId = query.get('experienceId') ?? '';
  const defaults = lastThirtyDays();
  const [from, to] = [query.get('from'), query.get('to')];
  const period = { from: isDay(from) ? from : defaults.from, to: isDay(to) ? to : defaults.to };
  const insights = useData(
    (signal) => api.get<Insights>('/api/v2/insights', { experienceId, from: period.from, to: period.to }, signal),
    [experienceId, period.from, period.to],
  );
  const dateField = (name: 'from' | 'to', label: string) => (
    <label>
      {label}{' '}
      <input
        type="date"
        name={name}
        value={period[name]}
        required
        onChange={(event) => {
          const value = event.currentTarget.value;
          // Both ends go into the link, so it shows this period whenever it is opened.
          if (value) set({ ...period, [name]: value });
        }}
      />
    </label>
  );
  return (
    <section aria-labelledby="insights-title" class="insights">
      <header class="section-header">
        <h2 id="insights-title">Insights</h2>
        <ExperienceFilter value={experienceId} names={names} onChange={(id) => set({ experienceId: id })} />
        {dateField('from', 'From')}
        {dateField('to', 'To')}
        <button type="button" onClick={insights.refresh}>
          Refresh
        </button>
      </header>
      <LoadedView loaded={insights}>
        {(data) => (
          <>
            <p class="muted">
              {data.from} to {data.to} (UTC days)
            </p>
            <Tiles totals={data.totals} />
            <Charts days={data.days} />
            <ContentGaps gaps={data.gaps} />
          </>
        )}
      </LoadedView>
    </section>
  );
}

/** The Insights page's own rules, added to the console's stylesheet. */
export const insightsStyles = `
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 12px; margin: 0 0 16px; }
.tile { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; min-width: 0; }
.tile dt { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
.tile dd { margin: 4px 0 0; font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 380px), 1fr)); gap: 12px; margin-bottom: 16px; }
.chart { margin: 0; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px; min-width: 0; }
.chart figcaption { font-weight: 600; margin-bottom: 8px; }
.chart-plot { width: 100%; min-width: 0; overflow: hidden; }
.gaps { list-style: none; padding: 0; display: grid; gap: 10px; }
.gap { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px; overflow-wrap: anywhere; }
.gap-examples { margin: 6px 0 0; padding-left: 20px; }
`;
