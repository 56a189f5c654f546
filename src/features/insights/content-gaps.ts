import { embedDeduplicated, type EmbeddingProvider } from '../../core/providers/embeddings/provider.ts';
import { yieldEvery } from '../../core/yield-every.ts';
import { MAX_GAP_EXAMPLES, type Gap } from './insights.schemas.ts';

/**
 * The cosine similarity from which a question joins a group (compared with the group's centroid).
 * Measured with builtin-fast, the default encoder, on 15 paraphrase pairs of support questions and
 * the 390 pairs of unrelated ones they make: unrelated pairs reach 0.497
 * at most (p99 0.471), so from 0.5 no two unrelated questions merge, while the paraphrases that
 * share their key words (4 of 15: "reset my password" / "password reset not working") do. Lower
 * thresholds merge more paraphrases but also unrelated questions (0.45: 5/15 and 7/390; 0.4: 8/15
 * and 14/390), and a merged gap hides the smaller one; a transformer encoder (builtin, openai)
 * scores paraphrases higher, so 0.5 errs on the side of separate groups there too.
 */
export const GAP_SIMILARITY = 0.5;

/** An unanswered or thumbs-down question of the period. */
export type GapQuestion = {
  text: string;
  sessionId: string;
  askedAt: string;
  unanswered: boolean;
  thumbsDown: boolean;
};

type Group = { sum: Float32Array; norm: number; members: GapQuestion[] };

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/** Same wording: case and surrounding or repeated spaces aside. */
const wording = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

function describe(members: GapQuestion[]): Gap {
  // Members are in the caller's order, the most recent first.
  const byWording = new Map<string, GapQuestion[]>();
  for (const member of members) {
    const key = wording(member.text);
    byWording.set(key, [...(byWording.get(key) ?? []), member]);
  }
  const wordings = [...byWording.values()];
  // The most asked wording; Array.prototype.sort is stable, so a tie keeps the most recent.
  const representative = [...wordings].sort((a, b) => b.length - a.length)[0]![0]!;
  return {
    question: representative.text.trim(),
    count: members.length,
    unanswered: members.filter((member) => member.unanswered).length,
    thumbsDown: members.filter((member) => member.thumbsDown).length,
    lastAskedAt: members[0]!.askedAt,
    examples: wordings.slice(0, MAX_GAP_EXAMPLES).map(([latest]) => ({ text: latest!.text.trim(), sessionId: latest!.sessionId, askedAt: latest!.askedAt })),
  };
}

/**
 * Groups questions that ask the same thing: each question, the most recent first, joins the group
 * whose centroid is the most similar to it if that similarity reaches GAP_SIMILARITY, else starts a
 * group. Centroids rather than a group's first question, so a group is not defined by one wording.
 * `questions` must be the most recent first; groups come largest first, then most recent.
 */
export async function groupContentGaps(questions: GapQuestion[], embedder: EmbeddingProvider): Promise<Gap[]> {
  if (questions.length === 0) return [];
  const vectors = await embedDeduplicated(
    questions.map((question) => wording(question.text)),
    (distinct) => embedder.embed(distinct),
  );
  const groups: Group[] = [];
  const pause = yieldEvery();
  for (const [index, question] of questions.entries()) {
    const vector = vectors[index]!;
    let best: Group | undefined;
    let bestSimilarity = GAP_SIMILARITY;
    for (const group of groups) {
      const similarity = group.norm === 0 ? 0 : dot(vector, group.sum) / group.norm;
      if (similarity >= bestSimilarity) {
        best = group;
        bestSimilarity = similarity;
      }
    }
    let group = best;
    if (!group) {
      group = { sum: new Float32Array(vector.length), norm: 0, members: [] };
      groups.push(group);
    }
    for (let dimension = 0; dimension < vector.length; dimension++) group.sum[dimension]! += vector[dimension]!;
    group.norm = Math.sqrt(dot(group.sum, group.sum));
    group.members.push(question);
    await pause();
  }
  return groups
    .map((group) => describe(group.members))
    .sort((a, b) => b.count - a.count || b.lastAskedAt.localeCompare(a.lastAskedAt));
}
