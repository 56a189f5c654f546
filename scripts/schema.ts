// Writes docs/schema.sql: the schema the numbered migrations produce, read from the catalog of a
// new in-memory embedded database once they have run (src/core/db/schema-dump.ts). PGlite rather
// than a server, so that `npm run schema` needs nothing but the clone; PostgreSQL 15 dumps the
// same text (src/core/db/schema-dump.test.ts checks the file on both engines).
import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { freshEmbeddedDb, migratedSchema, SCHEMA_FILE } from '../src/core/db/schema-dump.ts';

const db = await freshEmbeddedDb();
try {
  await writeFile(SCHEMA_FILE, await migratedSchema(db));
} finally {
  await db.close();
}
console.log(`wrote ${relative(process.cwd(), SCHEMA_FILE)}`);
