import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { ApiKeyResolver } from './api-key.resolver';
import { AuditResolver } from './audit.resolver';
import { GuardrailResolver } from './guardrail.resolver';
import { KeyRotationResolver } from './key-rotation.resolver';
import { ModelResolver } from './model.resolver';
import { SessionResolver } from './session.resolver';
import { StoredResponsesResolver } from './stored-responses.resolver';
import { UsageResolver } from './usage.resolver';
import { WebhookResolver } from './webhooks/webhook.resolver';

export const SCHEMA_BANNER = '# Generated from the TypeGraphQL resolvers by scripts/generate.ts; do not edit.';

/** The control-plane schema. Resolvers are stateless; services reach them through the request context. */
export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [SessionResolver, ApiKeyResolver, KeyRotationResolver, UsageResolver, ModelResolver, AuditResolver, GuardrailResolver, StoredResponsesResolver, WebhookResolver],
    validate: false,
    emitSchemaFile: false,
  });
}

/** `schema/schema.graphql`: sorted, so the file only changes when the schema does. */
export async function renderSchema(): Promise<string> {
  const schema = await buildGraphqlSchema();
  return `${SCHEMA_BANNER}\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
}
