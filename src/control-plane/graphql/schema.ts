import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, type ContainerType } from 'type-graphql';
import type { ControlPlaneServices } from '../control-plane-services';
import { AuditResolver } from './audit/audit.resolver';
import { GuardrailResolver } from './guardrails/guardrail.resolver';
import { ApiKeyResolver } from './keys/api-key.resolver';
import { KeyRotationResolver } from './keys/key-rotation.resolver';
import { ModelResolver } from './models/model.resolver';
import { SessionResolver } from './session/session.resolver';
import { StoredResponsesResolver } from './stored-responses/stored-responses.resolver';
import { UsageResolver } from './usage/usage.resolver';
import { WebhookResolver } from './webhooks/webhook.resolver';

export const SCHEMA_BANNER = '# Generated from the TypeGraphQL resolvers by scripts/generate.ts; do not edit.';

const RESOLVERS = [SessionResolver, ApiKeyResolver, KeyRotationResolver, UsageResolver, ModelResolver, AuditResolver, GuardrailResolver, StoredResponsesResolver, WebhookResolver] as const;

/** Each resolver, made once with the services it uses: TypeGraphQL takes them from here rather than constructing its own. */
function resolverContainer(services: ControlPlaneServices): ContainerType {
  const resolvers = new Map<unknown, object>([
    [SessionResolver, new SessionResolver(services.sessions, services.accounts)],
    [ApiKeyResolver, new ApiKeyResolver(services.keys)],
    [KeyRotationResolver, new KeyRotationResolver(services.rotations)],
    [UsageResolver, new UsageResolver(services.usage)],
    [ModelResolver, new ModelResolver(services.catalog)],
    [AuditResolver, new AuditResolver(services.audit)],
    [GuardrailResolver, new GuardrailResolver(services.guardrailPolicies)],
    [StoredResponsesResolver, new StoredResponsesResolver(services.storedResponses)],
    [WebhookResolver, new WebhookResolver(services.webhooks)],
  ]);
  // A resolver added to the schema but not made here fails the boot, not its first request.
  const unmade = RESOLVERS.filter((resolver) => !resolvers.has(resolver));
  if (unmade.length > 0) throw new Error(`GraphQL resolvers without an instance: ${unmade.map((r) => r.name).join(', ')}`);
  return {
    get(resolver: unknown) {
      const instance = resolvers.get(resolver);
      if (instance === undefined) throw new Error(`no GraphQL resolver instance for ${String(resolver)}`);
      return instance;
    },
  };
}

/**
 * The control-plane schema. Resolvers are stateless; each gets its services
 * through its constructor. Without services the schema can be printed and
 * validated against, not executed.
 */
export async function buildGraphqlSchema(services?: ControlPlaneServices): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: RESOLVERS,
    ...(services ? { container: resolverContainer(services) } : {}),
    validate: false,
    emitSchemaFile: false,
  });
}

/** `schema/schema.graphql`: sorted, so the file only changes when the schema does. */
export async function renderSchema(): Promise<string> {
  const schema = await buildGraphqlSchema();
  return `${SCHEMA_BANNER}\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
}
