import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { AuditResolver } from './audit/audit.resolver';
import { GuardrailResolver } from './guardrails/guardrail.resolver';
import { ApiKeyResolver } from './keys/api-key.resolver';
import { KeyRotationResolver } from './keys/key-rotation.resolver';
import { ModelResolver } from './models/model.resolver';
import { SessionResolver } from './session/session.resolver';
import { StoredResponsesResolver } from './stored-responses/stored-responses.resolver';
import { UsageResolver } from './usage/usage.resolver';

export const SCHEMA_BANNER = '# Generated from the TypeGraphQL resolvers by scripts/generate.ts; do not edit.';

/** The control-plane schema. Resolvers are stateless; services reach them through the request context. */
export async function buildGraphqlSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [SessionResolver, ApiKeyResolver, KeyRotationResolver, UsageResolver, ModelResolver, AuditResolver, GuardrailResolver, StoredResponsesResolver],
    validate: false,
    emitSchemaFile: false,
  });
}

/** `schema/schema.graphql`: sorted, so the file only changes when the schema does. */
export async function renderSchema(): Promise<string> {
  const schema = await buildGraphqlSchema();
  return `${SCHEMA_BANNER}\n\n${printSchema(lexicographicSortSchema(schema))}\n`;
}
