import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sentences } from './sentences.ts';

describe('sentences', () => {
  const cases: Array<[string, string, string[]]> = [
    ['an abbreviation before a lowercase word', 'Use a tool, e.g. pg_dump, to back up. Then restore.', ['Use a tool, e.g. pg_dump, to back up.', 'Then restore.']],
    ['an abbreviation before a capital', 'Any client, e.g. PostgreSQL itself, works. Done.', ['Any client, e.g. PostgreSQL itself, works.', 'Done.']],
    ['titles and approximations', 'Dr. Smith measured approx. 67 MB. It fits.', ['Dr. Smith measured approx. 67 MB.', 'It fits.']],
    ['decimals and versions', 'The value is 3.14 in version 3.11. Next.', ['The value is 3.14 in version 3.11.', 'Next.']],
    ['a period inside inline code', 'Call `os.path. join` now. Then stop.', ['Call `os.path. join` now.', 'Then stop.']],
    ['a unit abbreviation that ends a sentence still ends it', 'It is 5 ft. Then stop.', ['It is 5 ft.', 'Then stop.']],
    ['questions and exclamations', 'Is it fast? Yes! Very.', ['Is it fast?', 'Yes!', 'Very.']],
  ];
  for (const [name, text, expected] of cases) test(name, () => assert.deepEqual(sentences(text), expected));
});
