import type { Adapter } from './adapter.ts';
import { contentHubAdapter } from './content-hub.ts';
import { filesAdapter } from './files/files-adapter.ts';
import { genericJsonAdapter } from './generic-json.ts';

/** Every input format lore accepts, in the order `GET /data-ingestion/adapters` lists them. A new adapter is one file plus one line here. */
export const adapters: readonly Adapter[] = [genericJsonAdapter, contentHubAdapter, filesAdapter];

/** The adapter a job's `adapterType` names (exact, case-sensitive), or undefined. */
export function findAdapter(name: string): Adapter | undefined {
  return adapters.find((adapter) => adapter.name === name);
}
