import { GraphQLJSON, GraphQLSafeInt } from 'graphql-scalars';

// Token counts and call counts outgrow GraphQL's 32-bit Int; they are whole
// numbers up to 2^53 - 1, so SafeInt (not Float) keeps them integers on the wire.
export const SafeInt = GraphQLSafeInt;
export const JSONValue = GraphQLJSON;
