import { defineEntity, p } from '@mikro-orm/core';
import { AccountSchema } from '../../domain/accounts/account.entity';

/**
 * A Responses-form call kept for `previous_response_id`, `item_reference`
 * and the retrieval endpoints (`store`, OpenAI's default). Owned by the
 * account of the key that made it; every read filters by account. Written by
 * plain SQL off the reply's path (src/data-plane/responses/response-store.ts),
 * purged past `expires_at`.
 */
export const StoredResponseSchema = defineEntity({
  name: 'StoredResponse',
  tableName: 'stored_responses',
  properties: {
    /** `resp_` and 32 random hex bytes: unguessable. */
    id: p.string().length(80).primary(),
    account: () => p.manyToOne(AccountSchema),
    /** The key that made it (no foreign key: a cancelled key's responses stay, and keys are never deleted). */
    apiKeyId: p.string().length(40),
    requestId: p.string().length(40),
    previousResponseId: p.string().length(80).nullable(),
    conversationId: p.string().length(80).nullable(),
    /** The Response object as the client received it (after output guardrails). */
    response: p.json<Record<string, unknown>>(),
    /** The whole input the upstream read (stored context expanded, after input guardrails), as items. */
    input: p.json<unknown[]>(),
    /** The output items as context for a follow-up: the client's, with encrypted reasoning as the upstream returned it. */
    output: p.json<unknown[]>(),
    /** JSON bytes of input and output: what a follow-up adds to its body. */
    contextBytes: p.integer(),
    createdAt: p.datetime(),
    expiresAt: p.datetime(),
  },
  indexes: [{ properties: ['account', 'createdAt'] }, { properties: ['expiresAt'] }],
});

/**
 * Where an item id of a stored response is, for `item_reference`: its
 * output items and the input items the call itself added (not the context
 * it was given). Rows go with their response.
 */
export const StoredItemSchema = defineEntity({
  name: 'StoredItem',
  tableName: 'stored_items',
  properties: {
    response: () => p.manyToOne(StoredResponseSchema).primary().deleteRule('cascade'),
    /** Index in `input` or `output`. */
    position: p.integer().primary(),
    inOutput: p.boolean().primary(),
    account: () => p.manyToOne(AccountSchema),
    itemId: p.string().length(120),
  },
  indexes: [{ properties: ['account', 'itemId'] }],
});

/** A Conversations API conversation: an ordered list of items, owned by an account. */
export const ConversationSchema = defineEntity({
  name: 'Conversation',
  tableName: 'conversations',
  properties: {
    /** `conv_` and 32 random hex bytes. */
    id: p.string().length(80).primary(),
    account: () => p.manyToOne(AccountSchema),
    metadata: p.json<Record<string, string>>(),
    createdAt: p.datetime(),
    /** Retention counts from the last write (items added, metadata changed). */
    expiresAt: p.datetime(),
  },
  indexes: [{ properties: ['expiresAt'] }],
});

export const ConversationItemSchema = defineEntity({
  name: 'ConversationItem',
  tableName: 'conversation_items',
  properties: {
    conversation: () => p.manyToOne(ConversationSchema).primary().deleteRule('cascade'),
    /** Order within the conversation (ascending = oldest first). */
    seq: p.bigint('number').primary(),
    itemId: p.string().length(120),
    item: p.json<Record<string, unknown>>(),
  },
  uniques: [{ properties: ['conversation', 'itemId'] }],
});
