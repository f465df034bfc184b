// One adapter instance per provider type for the whole process, created by
// the composition root: the mock's prefix cache and the HTTP keep-alive pool
// are then shared by every deployment of that type.
import type { ProviderType } from '../core/catalog.types';
import { AnthropicProvider } from './anthropic/anthropic.provider';
import { MockProvider, type MockProviderOptions } from './mock/mock.provider';
import { OpenAiProvider } from './openai/openai.provider';
import type { ProviderAdapter } from './provider';
import { UpstreamPool } from './upstream-http';

export interface ProviderRegistry {
  forType(type: ProviderType): ProviderAdapter;
  /** Closes idle upstream connections (graceful shutdown). */
  close(): void;
}

export interface ProviderRegistryOptions {
  mock?: MockProviderOptions;
  /** Wraps every adapter (e.g. to time upstream calls). */
  wrap?: (adapter: ProviderAdapter) => ProviderAdapter;
}

export function createProviderRegistry(options: ProviderRegistryOptions = {}): ProviderRegistry {
  const pool = new UpstreamPool();
  const wrap = options.wrap ?? ((adapter: ProviderAdapter): ProviderAdapter => adapter);
  const adapters: Record<ProviderType, ProviderAdapter> = {
    anthropic: wrap(new AnthropicProvider(pool)),
    openai: wrap(new OpenAiProvider(pool)),
    mock: wrap(new MockProvider(options.mock)),
  };
  return {
    forType(type: ProviderType): ProviderAdapter {
      return adapters[type];
    },
    close(): void {
      pool.close();
    },
  };
}
