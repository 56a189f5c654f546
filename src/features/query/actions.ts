import type { Action } from '../experiences/action.schema.ts';
import type { Source } from './query.schemas.ts';

/**
 * When an action template of an experience is shown, from its `visibility.when` (lore's field;
 * the spec leaves visibility open): `always`, `answered` (the knowledge base held an answer),
 * `unanswered` (the fallback was given), or `handover` (unanswered, or the user asked for a
 * person). Handover templates default to `handover`, the others to `always`.
 */
type When = 'always' | 'answered' | 'unanswered' | 'handover';

export type ActionContext = {
  templates: readonly Action[];
  /** The sources the answer cites, in citation order. */
  cited: readonly Source[];
  /** Entries that were retrieved but not cited, best first: the suggested follow-ups. */
  related: readonly { title: string }[];
  answered: boolean;
  handoverRequested: boolean;
};

const MAX_SOURCE_LINKS = 3;
const MAX_FOLLOW_UPS = 3;
const MAX_LABEL = 200;

// "I want to talk to a human", "can I speak with an agent?", "contact support".
const HANDOVER_REQUEST =
  /\b(human|real person|live (agent|chat|person)|(talk|speak|chat) (to|with) (a |an |the |some)?(person|someone|somebody|agent|representative|operator|support|staff)|agent|representative|operator|contact (support|you|someone)|customer service)\b/i;

/** Whether a message asks to be handed over to a person. */
export function asksForHandover(text: string): boolean {
  return HANDOVER_REQUEST.test(text);
}

function whenOf(template: Action): When {
  const when = template.visibility?.when;
  if (when === 'always' || when === 'answered' || when === 'unanswered' || when === 'handover') return when;
  return template.action.type === 'trigger_handover' ? 'handover' : 'always';
}

function visible(template: Action, context: ActionContext): boolean {
  switch (whenOf(template)) {
    case 'always':
      return true;
    case 'answered':
      return context.answered;
    case 'unanswered':
      return !context.answered;
    case 'handover':
      return !context.answered || context.handoverRequested;
  }
}

function label(text: string): string {
  return text.length <= MAX_LABEL ? text : `${text.slice(0, MAX_LABEL - 1)}…`;
}

/**
 * A follow-up question from an entry title: a title that opens with a question asks it, any other
 * title becomes "What should I know about <title>?". That wording fits every kind of title (a
 * topic, a file name, a how-to) and does not open like a follow-up ("what about…"), which
 * retrieval would search together with the previous question.
 */
function followUpQuery(title: string): string {
  return /^[^?]+\?/.exec(title)?.[0] ?? `What should I know about ${title}?`;
}

/**
 * The buttons beside an answer: the experience's templates that apply, a link to each cited
 * source that has a web URL, and follow-up questions from related entries. Generated ids carry a
 * `lore-` prefix so that they cannot clash with a template's id.
 */
export function buildActions(context: ActionContext): Action[] {
  const actions: Action[] = context.templates.filter((template) => visible(template, context));
  const links = context.cited.filter((source) => source.url && /^https?:\/\//i.test(source.url)).slice(0, MAX_SOURCE_LINKS);
  for (const source of links) {
    actions.push({ id: `lore-source-${source.number}`, label: label(`Open ${source.title}`), action: { type: 'open_url', url: source.url } });
  }
  if (context.answered) {
    const seen = new Set(context.cited.map((source) => source.title.toLowerCase()));
    const titles = context.related.map((entry) => entry.title.trim()).filter((title) => {
      const fresh = title !== '' && !seen.has(title.toLowerCase());
      seen.add(title.toLowerCase());
      return fresh;
    });
    // The button reads as the question it asks, not as a bare title.
    titles.slice(0, MAX_FOLLOW_UPS).forEach((title, index) => {
      const query = followUpQuery(title);
      actions.push({ id: `lore-follow-up-${index + 1}`, label: label(query), action: { type: 'send_query', query: query.slice(0, 2000) } });
    });
  }
  return actions;
}
