/** Writes src/schema.ts from the server's current /openapi.json (see schema.ts). */
import { writeFileSync } from 'node:fs';
import { SCHEMA_FILE, schemaSource, serverDocument } from './schema.js';

writeFileSync(SCHEMA_FILE, await schemaSource(await serverDocument()));
console.log(`wrote ${SCHEMA_FILE}`);
