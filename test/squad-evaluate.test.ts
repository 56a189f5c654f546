// bench:squad's measures against the values SQuAD's official evaluate-v2.0.py gives for the same
// strings (normalize_answer, compute_f1), and the parts of an answer they are applied to.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bestF1, containsAnswer, firstSentence, normalizeAnswer, tokenF1, wordCount, withoutCitations } from '../bench/squad/evaluate.ts';
import { sampleQuestions, type SquadQuestion } from '../bench/squad/split.ts';

describe('SQuAD normalization and F1, as the official script', () => {
  const normalized: [string, string][] = [
    ['The Normans, in the 10th and 11th centuries.', 'normans in 10th and 11th centuries'],
    ['An  apple a day', 'apple day'],
    ['theatre, anatomy, Xthe', 'theatre anatomy xthe'],
    ['éthe the1 the_end', 'éthe the1 theend'],
    ['“Quoted” — dash…', '“quoted” — dash…'],
    ['304,016', '304016'],
    ['the', ''],
  ];
  for (const [text, expected] of normalized) test(`normalizes ${JSON.stringify(text)}`, () => assert.equal(normalizeAnswer(text), expected));

  const scored: [string, string, number][] = [
    ['in the 10th and 11th centuries', '10th and 11th centuries', 8 / 9],
    ['In 2006, 304,016 companies were registered in the city.', '304,016', 2 / 9],
    ['France', 'Denmark, Iceland and Norway', 0],
    ['x x y', 'x y y', 2 / 3],
    ['a b', 'b b', 2 / 3],
    ['the', 'the', 1],
    ['', 'France', 0],
  ];
  for (const [prediction, gold, f1] of scored) test(`F1 of ${JSON.stringify(prediction)} against ${JSON.stringify(gold)}`, () => assert.ok(Math.abs(tokenF1(prediction, gold) - f1) < 1e-9));

  test('a question scores its best gold answer; none scores 0', () => {
    assert.equal(bestF1('Rollo', ['Norway', 'Rollo']), 1);
    assert.equal(bestF1('Rollo', []), 0);
  });
});

describe('what an answer is judged on', () => {
  test('a gold answer counts only as whole normalized words', () => {
    assert.equal(containsAnswer('In 2006, 304,016 companies were registered.', ['304,016']), true);
    assert.equal(containsAnswer('It began in 1973.', ['197']), false);
    assert.equal(containsAnswer('Under the Yuan dynasty', ['the Yuan']), true);
    assert.equal(containsAnswer('Anything', ['the']), false);
  });

  test('the first sentence runs to the first citation, or is the first sentence when nothing is cited', () => {
    assert.equal(firstSentence('One. Two. [1] Three. [2]'), 'One. Two.');
    assert.equal(firstSentence('Mr. Smith went home. Then he slept.'), 'Mr. Smith went home.');
    assert.equal(firstSentence('Sorry, nothing found.'), 'Sorry, nothing found.');
  });

  test('citations are no words', () => {
    assert.equal(withoutCitations('A b. [1]\n\nC d. [2]'), 'A b. \n\nC d.');
    assert.equal(wordCount(withoutCitations('- A list item, 42 [1] —')), 4);
  });
});

describe('the sample', () => {
  const questions: SquadQuestion[] = Array.from({ length: 40 }, (_, index) => ({
    id: `q${index}`,
    question: `Question ${index}?`,
    answers: index % 2 ? [] : ['answer'],
    unanswerable: index % 2 === 1,
    article: 'Article',
    paragraphId: `Article#${index % 5}`,
  }));

  test('is fixed by its seed, each kind apart, and a smaller one is the start of a larger one', () => {
    const small = sampleQuestions(questions, { answerable: 3, unanswerable: 2, seed: 35 });
    const large = sampleQuestions(questions, { answerable: 6, unanswerable: 4, seed: 35 });
    assert.deepEqual(sampleQuestions(questions, { answerable: 3, unanswerable: 2, seed: 35 }), small);
    assert.deepEqual(small.slice(0, 3), large.slice(0, 3));
    assert.deepEqual(small.slice(3), large.slice(6, 8));
    assert.ok(small.slice(0, 3).every((question) => !question.unanswerable) && small.slice(3).every((question) => question.unanswerable));
    assert.notDeepEqual(sampleQuestions(questions, { answerable: 3, unanswerable: 2, seed: 36 }), small);
  });

  test('asks for no more questions than the split has', () => {
    assert.throws(() => sampleQuestions(questions, { answerable: 21, unanswerable: 0, seed: 35 }), /20 answerable and 20 unanswerable/);
  });
});
