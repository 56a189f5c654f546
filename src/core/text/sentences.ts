/**
 * Sentences of a paragraph, for answers quoted from documentation. Unicode's sentence rules
 * (UAX #29, ICU through Intl.Segmenter) already keep "e.g. pg_dump" and "3.14" whole, because a
 * lowercase word or a digit after a period does not start a sentence. They still break after an
 * abbreviation followed by a capital ("e.g. PostgreSQL", "Dr. Smith"), and inside inline code
 * ("`os.path.join`. Then"), so those breaks are undone here.
 */
const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

// Abbreviations that end in a period without ending the sentence. A list rather than a rule
// ("a short word and a period"): "It is 5 ft. Then..." must still break.
const ABBREVIATIONS = new Set([
  'e.g.', 'i.e.', 'etc.', 'vs.', 'cf.', 'approx.', 'incl.', 'esp.', 'resp.', 'viz.', 'ca.', 'al.',
  'fig.', 'figs.', 'no.', 'nos.', 'vol.', 'ch.', 'sec.', 'p.', 'pp.', 'ed.', 'eq.', 'ex.', 'ref.', 'max.', 'min.', 'dept.',
  'mr.', 'mrs.', 'ms.', 'dr.', 'prof.', 'jr.', 'sr.', 'st.', 'inc.', 'ltd.', 'co.', 'corp.',
  'jan.', 'feb.', 'mar.', 'apr.', 'jun.', 'jul.', 'aug.', 'sep.', 'sept.', 'oct.', 'nov.', 'dec.',
]);

const SPACE = /\s/;

/**
 * The last word of a text (its last run of non-space characters), found from its end: a regular
 * expression anchored at the end tries every start position of the text, and the text grows while
 * abbreviations join its segments.
 */
function lastWord(text: string): string | undefined {
  let end = text.length;
  while (end > 0 && SPACE.test(text[end - 1]!)) end -= 1;
  let start = end;
  while (start > 0 && !SPACE.test(text[start - 1]!)) start -= 1;
  return start < end ? text.slice(start, end) : undefined;
}

function endsWithAbbreviation(sentence: string): boolean {
  // Every abbreviation ends in a period: most segments end otherwise, and need no word cut out.
  if (!sentence.trimEnd().endsWith('.')) return false;
  const last = lastWord(sentence)?.toLowerCase();
  return last !== undefined && ABBREVIATIONS.has(last.replace(/^[("'[]+/, ''));
}

/** Whether a backtick code span opened in `text` is still open at its end. */
function insideCode(text: string): boolean {
  if (!text.includes('`')) return false;
  return (text.match(/`/g)?.length ?? 0) % 2 === 1;
}

/** The sentences of `text`, trimmed, in order; their concatenation with single spaces reads as the text. */
export function sentences(text: string): string[] {
  const result: string[] = [];
  let pending = '';
  for (const { segment } of segmenter.segment(text)) {
    pending += segment;
    if (endsWithAbbreviation(pending) || insideCode(pending)) continue;
    if (pending.trim()) result.push(pending.trim());
    pending = '';
  }
  if (pending.trim()) result.push(pending.trim());
  return result;
}
