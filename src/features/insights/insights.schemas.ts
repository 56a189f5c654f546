import { Type, type Static } from 'typebox';
import { Timestamp, Uuid } from '../../core/http/schemas.ts';

/** The longest period one request covers: a year, leap day included. */
export const MAX_PERIOD_DAYS = 366;
/** The period without `from`: the last 30 days, today (UTC) included. */
export const DEFAULT_PERIOD_DAYS = 30;
/** Content gaps consider at most this many questions of the period, the most recent first. */
export const MAX_GAP_QUESTIONS = 500;
/** Example questions shown per content gap. */
export const MAX_GAP_EXAMPLES = 5;

const Day = Type.String({ format: 'date', description: 'A calendar day (UTC), YYYY-MM-DD.' });

export const InsightsQuerySchema = Type.Object(
  {
    experienceId: Type.Optional(Type.String({ format: 'uuid', description: 'One experience of the workspace; absent: all of them.' })),
    from: Type.Optional(Type.String({ format: 'date', description: `First day (UTC), inclusive; default: ${DEFAULT_PERIOD_DAYS - 1} days before \`to\`.` })),
    to: Type.Optional(Type.String({ format: 'date', description: `Last day (UTC), inclusive; default: today. At most ${MAX_PERIOD_DAYS} days from \`from\`.` })),
  },
  { additionalProperties: false },
);

const Share = Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'A fraction of the queries, rounded to 4 decimals; null without queries.' });

/** What is counted for one day, and for the whole period. */
const Figures = {
  queries: Type.Integer({ description: 'Queries answered.' }),
  answered: Type.Integer({ description: 'Of which grounded in the knowledge bases.' }),
  fallback: Type.Integer({ description: 'Of which answered by the experience\'s fallback message.' }),
  answeredShare: Share,
  fallbackShare: Share,
  feedbackUp: Type.Integer({ description: 'Of which rated thumbs up (their current rating).' }),
  feedbackDown: Type.Integer({ description: 'Of which rated thumbs down.' }),
  medianLatencyMs: Type.Union([Type.Integer(), Type.Null()], { description: 'Median time to answer, in ms; null without queries.' }),
};

export const DaySchema = Type.Object({ date: Day, ...Figures });
export const TotalsSchema = Type.Object(Figures);

export const GapExampleSchema = Type.Object({
  text: Type.String(),
  sessionId: Uuid,
  askedAt: Timestamp,
});

export const GapSchema = Type.Object({
  question: Type.String({ description: 'The group\'s representative: its most asked wording (the most recent on a tie).' }),
  count: Type.Integer({ description: 'Questions in the group.' }),
  unanswered: Type.Integer({ description: 'Of which answered by the fallback message.' }),
  thumbsDown: Type.Integer({ description: 'Of which rated thumbs down.' }),
  lastAskedAt: Timestamp,
  examples: Type.Array(GapExampleSchema, { description: `Up to ${MAX_GAP_EXAMPLES} distinct wordings, the most recent first, each with its session.` }),
});

export const InsightsSchema = Type.Object({
  experienceId: Type.Union([Uuid, Type.Null()]),
  from: Day,
  to: Day,
  totals: TotalsSchema,
  days: Type.Array(DaySchema, { description: 'Every day of the period, oldest first (days without queries included).' }),
  gaps: Type.Object({
    considered: Type.Integer({ description: 'Unanswered or thumbs-down questions grouped.' }),
    limit: Type.Integer({ description: `At most this many, the most recent first (${MAX_GAP_QUESTIONS}).` }),
    truncated: Type.Boolean({ description: 'True when the period had more of them than `limit`.' }),
    groups: Type.Array(GapSchema, { description: 'Largest group first, then the most recently asked.' }),
  }),
});

export type InsightsQuery = Static<typeof InsightsQuerySchema>;
export type Insights = Static<typeof InsightsSchema>;
export type DayFigures = Static<typeof DaySchema>;
export type Gap = Static<typeof GapSchema>;
