/** What a process does (docs/operations.md#roles): `all` ingests (when it leads) and serves, `api` only serves, `ingest` only ingests. */
export const ROLES = ['all', 'api', 'ingest'] as const;
export type Role = (typeof ROLES)[number];
