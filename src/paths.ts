// The repository root, for files the gateway reads at run time (openapi/,
// web/, src/db/migrations for authoring). Computed from this module's own
// place one level below the root, which also holds for the production bundle
// (dist/gateway.mjs, see scripts/build-gateway.ts): both sit one folder deep.
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
