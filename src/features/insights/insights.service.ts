import type { Queryable } from '../../core/db/db.ts';
import { AppError } from '../../core/errors.ts';
import type { EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import { allowedKnowledgeBases, experienceAllowed, type Reach } from '../auth/reach.ts';
import { groupContentGaps, type GapQuestion } from './content-gaps.ts';
import { DEFAULT_PERIOD_DAYS, MAX_GAP_QUESTIONS, MAX_PERIOD_DAYS, type DayFigures, type Insights, type InsightsQuery } from './insights.schemas.ts';

const DAY_MS = 86_400_000;

/** A period of whole UTC days: `from` and `to` inclusive, `start` and `end` the instants around them. */
export type Period = { from: string; to: string; start: Date; end: Date };

const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The request's period with its defaults (the last 30 days), or the 400 of a reversed or too long one. */
export function resolvePeriod(query: Pick<InsightsQuery, 'from' | 'to'>, now = new Date()): Period {
  const to = query.to ?? dayOf(now);
  const from = query.from ?? dayOf(new Date(Date.parse(to) - (DEFAULT_PERIOD_DAYS - 1) * DAY_MS));
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  const fail = (path: string, message: string) => new AppError('VALIDATION_FAILED', `${path} ${message}`, { errors: [{ path, message }] });
  if (days < 1) throw fail('querystring:/from', `must not be after to (${to})`);
  if (days > MAX_PERIOD_DAYS) throw fail('querystring:/to', `must be at most ${MAX_PERIOD_DAYS - 1} days after from (a period of at most ${MAX_PERIOD_DAYS} days)`);
  return { from, to, start: new Date(Date.parse(from)), end: new Date(Date.parse(to) + DAY_MS) };
}

type FiguresRow = {
  date: string | null;
  queries: number;
  answered: number;
  feedback_up: number;
  feedback_down: number;
  median_latency: number | null;
};

const share = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

function toFigures(row: FiguresRow | undefined): Omit<DayFigures, 'date'> {
  const queries = row?.queries ?? 0;
  const answered = row?.answered ?? 0;
  return {
    queries,
    answered,
    fallback: queries - answered,
    answeredShare: share(answered, queries),
    fallbackShare: share(queries - answered, queries),
    feedbackUp: row?.feedback_up ?? 0,
    feedbackDown: row?.feedback_down ?? 0,
    medianLatencyMs: row?.median_latency === null || row?.median_latency === undefined ? null : Math.round(row.median_latency),
  };
}

// The queries of the period, of one experience or all ($2 NULL) within reach ($5), by when lore
// answered them (queries_workspace); each with its current rating.
const periodQueries = `FROM queries q LEFT JOIN query_feedback f ON f.query_id = q.id AND f.workspace_id = $1
  WHERE q.workspace_id = $1 AND ($2::uuid IS NULL OR q.experience_id = $2::uuid)
    AND q.created_at >= $3::timestamptz AND q.created_at < $4::timestamptz AND ${experienceAllowed('q.experience_id', 5)}`;

/** Per-day figures and the period's totals, in one statement (the totals are the empty grouping set). */
async function figures(db: Queryable, params: unknown[], period: Period): Promise<Pick<Insights, 'totals' | 'days'>> {
  const { rows } = await db.query<FiguresRow>(
    `SELECT to_char((q.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS date,
            count(*)::int AS queries,
            (count(*) FILTER (WHERE q.grounded))::int AS answered,
            (count(*) FILTER (WHERE f.rating = 'up'))::int AS feedback_up,
            (count(*) FILTER (WHERE f.rating = 'down'))::int AS feedback_down,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY q.latency_ms) AS median_latency
     ${periodQueries}
     GROUP BY GROUPING SETS ((1), ())`,
    params,
  );
  const byDay = new Map(rows.filter((row) => row.date !== null).map((row) => [row.date, row]));
  const days: DayFigures[] = [];
  for (let time = period.start.getTime(); time < period.end.getTime(); time += DAY_MS) {
    const date = dayOf(new Date(time));
    days.push({ date, ...toFigures(byDay.get(date)) });
  }
  return { totals: toFigures(rows.find((row) => row.date === null)), days };
}

type GapRow = { text: string; session_id: string; created_at: Date; grounded: boolean; rating: 'up' | 'down' | null };

/** The period's unanswered or thumbs-down questions, the most recent first, one more than the limit. */
async function gapQuestions(db: Queryable, params: unknown[]): Promise<GapQuestion[]> {
  const { rows } = await db.query<GapRow>(
    `SELECT q.text, q.session_id, q.created_at, q.grounded, f.rating
     ${periodQueries} AND (NOT q.grounded OR f.rating = 'down')
     ORDER BY q.created_at DESC, q.id LIMIT ${MAX_GAP_QUESTIONS + 1}`,
    params,
  );
  return rows.map((row) => ({
    text: row.text,
    sessionId: row.session_id,
    askedAt: row.created_at.toISOString(),
    unanswered: !row.grounded,
    thumbsDown: row.rating === 'down',
  }));
}

/**
 * The insights of a period: per-day counts, shares and median latency, and the content gaps (the
 * unanswered and thumbs-down questions grouped by meaning, with the workspace's encoder).
 */
export async function insights(
  db: Queryable,
  embedder: EmbeddingProvider,
  reach: Reach,
  experienceId: string | undefined,
  period: Period,
): Promise<Insights> {
  const params = [reach.workspaceId, experienceId ?? null, period.start.toISOString(), period.end.toISOString(), allowedKnowledgeBases(reach)];
  const [{ totals, days }, questions] = await Promise.all([figures(db, params, period), gapQuestions(db, params)]);
  const considered = questions.slice(0, MAX_GAP_QUESTIONS);
  return {
    experienceId: experienceId ?? null,
    from: period.from,
    to: period.to,
    totals,
    days,
    gaps: {
      considered: considered.length,
      limit: MAX_GAP_QUESTIONS,
      truncated: questions.length > MAX_GAP_QUESTIONS,
      groups: await groupContentGaps(considered, embedder),
    },
  };
}
