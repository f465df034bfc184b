// One adapter instance per provider type for the whole process, created by
// the composition root: the mock's prefix cache and the HTTP keep-alive pool
// are then shared by every deployment of that type.
import type { ProviderType } from '../routing/catalog.types';
import { AnthropicProvider } from './anthropic/anthropic.provider';
import { MockProvider, type MockProviderOptions } from './mock/mock.provider';
import { OpenAiProvider } from './openai/openai.provider';
import type { ProviderAdapter } from './provider';

export interface ProviderRegistry {
  forType(type: ProviderType): ProviderAdapter;
}

export interface ProviderRegistryOptions {
  mock?: MockProviderOptions;
  /** Replaces the adapter of a type, e.g. to wrap one with metrics. */
  overrides?: Partial<Record<ProviderType, ProviderAdapter>>;
}

export function createProviderRegistry(options: ProviderRegistryOptions = {}): ProviderRegistry {
  const adapters: Record<ProviderType, ProviderAdapter> = {
    anthropic: options.overrides?.anthropic ?? new AnthropicProvider(),
    openai: options.overrides?.openai ?? new OpenAiProvider(),
    mock: options.overrides?.mock ?? new MockProvider(options.mock),
  };
  return {
    forType(type: ProviderType): ProviderAdapter {
      return adapters[type];
    },
  };
}
