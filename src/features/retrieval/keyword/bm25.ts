// BM25 parameters, chosen on SciFact's train split (bench/history.md, "Retrieval quality on
// SciFact"): the grid k1 0.6-2.0 by b 0.2-0.9 is flat there (nDCG@10 0.678-0.688), and these are
// also the values the usual BM25 baselines use. The SQL function keyword_term_weight (migration
// 007) computes with them as literals (1.9, 0.9, 0.6, 0.4), so a change here must go into a new
// migration replacing that function too; keyword-ranking.test.ts fails until both agree.
export const BM25_K1 = 0.9;
export const BM25_B = 0.4;

/**
 * BM25's term weight without idf, as `keyword_term_weight` computes it: the same floating-point
 * operations in the same order (k1 + 1 and 1 − b are exactly 1.9 and 0.6 in doubles), so that
 * posting lists scored in memory (posting-lists.ts) round to the database's scores.
 */
export function termWeight(frequency: number, length: number, averageLength: number): number {
  return (frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * (1 - BM25_B + (BM25_B * length) / averageLength));
}
