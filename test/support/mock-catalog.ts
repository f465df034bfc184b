// Small catalogs for fault, drain and fuzz tests: every tier of a model routes
// to the same ordered deployments, so the complexity assessment cannot send a
// request somewhere the test did not mean.
import { catalogFile } from './data-plane';

/** A deployment in catalog-file form. */
export interface RouteJson {
  provider: string;
  model: string;
  thinking?: boolean;
}

/** Mock behaviour in catalog-file form (see `src/routing/catalog.ts`). */
export interface MockJson {
  latency_ms?: number;
  chunk_delay_ms?: number;
  chunk_chars?: number;
  fail_rate?: number;
  fail_status?: number;
  reset_after_chunks?: number | null;
}

/** A mock provider entry; zero latency unless told otherwise. */
export const mockProvider = (mock: MockJson = {}): Record<string, unknown> => ({
  type: 'mock',
  mock: { latency_ms: 0, chunk_delay_ms: 0, ...mock },
});

/** Catalog-file JSON: `models` maps a neutral name to its deployments, used for every tier. */
export function catalogJson(providers: Record<string, unknown>, models: Record<string, RouteJson[]>): Record<string, unknown> {
  return catalogFile({
    providers,
    models: Object.entries(models).map(([name, routes]) => ({
      name,
      display_name: name,
      routes: { light: routes, standard: routes, heavy: routes, thinking: routes },
    })),
  });
}
