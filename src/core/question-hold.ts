/**
 * "While questions come": a visitor's question asked or answered within the last second. A
 * second is longer than the gap between one visitor's question and the next in a steady stream,
 * so the questions of one burst keep it. Bulk work yields to questions for this long in two
 * places: PGlite's write groups (write-groups.ts, decision 166) and the builtin encoder's bulk
 * batches (builtin.ts, decision 168).
 */
export const QUESTION_HOLD_MS = 1000;
