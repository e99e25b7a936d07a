/**
 * The search backend this deployment uses. PostgreSQL's is the only one
 * shipped; an OpenSearch backend would be chosen here (see README, Search).
 */
import type { SearchBackend } from './backend.ts';
import { postgresSearch } from './postgresSearch.ts';

export type { SearchBackend,    } from './backend.ts';

/** The backend every search goes through. */
export const searchBackend: SearchBackend = postgresSearch;
