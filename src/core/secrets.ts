import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from './config.ts';
import type { Secrets } from './context.ts';

type StoredSecrets = { tokenSecret: string; adminApiKey: string };

/** The outcome of resolving secrets: what to use, and the admin key when it was just generated. */
export type ResolvedSecrets = { secrets: Secrets; generatedAdminKey?: string };

async function readStored(file: string): Promise<StoredSecrets | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredSecrets;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Takes TOKEN_SECRET and ADMIN_API_KEY from config. On the embedded engine, a missing one is
 * generated at first start and kept in `DATA_DIR/secrets.json` (mode 0600), so tokens stay valid
 * across restarts. On PostgreSQL TOKEN_SECRET is required by config validation (several processes
 * must share it) and the admin HTTP API is off unless ADMIN_API_KEY is set.
 */
export async function resolveSecrets(config: Config): Promise<ResolvedSecrets> {
  if (config.databaseUrl) {
    return {
      secrets: { tokenSecret: new TextEncoder().encode(config.tokenSecret), adminApiKey: config.adminApiKey },
    };
  }
  const file = join(config.dataDir, 'secrets.json');
  let stored = await readStored(file);
  let generatedAdminKey: string | undefined;
  if (!stored) {
    stored = {
      tokenSecret: randomBytes(48).toString('base64url'),
      adminApiKey: `lore_admin_${randomBytes(24).toString('base64url')}`,
    };
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    if (!config.adminApiKey) generatedAdminKey = stored.adminApiKey;
  }
  return {
    secrets: {
      tokenSecret: new TextEncoder().encode(config.tokenSecret ?? stored.tokenSecret),
      adminApiKey: config.adminApiKey ?? stored.adminApiKey,
    },
    generatedAdminKey,
  };
}
