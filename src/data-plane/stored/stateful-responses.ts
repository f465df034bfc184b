// The stateful side of the Responses form: before admission, a call's
// `previous_response_id`, `conversation` and `item_reference` items become
// the stored items they name (same account only), so routing, the credit
// reservation, guardrails and the upstream all see the whole input, in the
// body, as if the caller had sent it. Before the reply's last bytes, the call
// is kept (unless `store: false`) and a conversation grows by its input and
// output.
import type { Logger } from 'pino';
import { appError, invalid } from '../../errors';
import { BODY_LIMIT } from '../../http/body-allowance';
import { isObject } from '../../core/json-edit';
import type { RawObject } from '../../core/canonical';
import type { ResponsesRequest } from '../responses/responses.decoder';
import type { ConversationStore } from './conversation-store';
import type { ResponseStore } from './response-store';
import { MAX_CONTEXT_ITEMS, checkItemIds, contextItem, inputItems, jsonBytes, keptItem, randomId, replayable } from './stored-items';

/** What a Responses call carries of stored state, from its request to its reply. */
export interface StatefulCall {
  /** `resp_…`: random, so unguessable. */
  responseId: string;
  store: boolean;
  previousResponseId: string | null;
  conversationId: string | null;
  /** The body the pipeline reads: stored context expanded; no previous_response_id, conversation or item_reference left. */
  body: ResponsesRequest;
  /** The stored context as kept (with ids): the first items of `body.input`. */
  context: RawObject[];
  /** JSON bytes the expansion added to the body. */
  addedBytes: number;
}

/** The caller's identity, for what is kept. */
export interface Owner {
  accountId: string;
  apiKeyId: string;
  requestId: string;
}

function conversationIdOf(value: unknown): string | null {
  if (value == null) return null;
  if (typeof value === 'string' && value !== '') return value;
  if (isObject(value) && typeof value.id === 'string' && value.id !== '') return value.id;
  throw invalid('conversation', 'conversation: must be a conversation id (`conv_…`) or an object {id}');
}

export class StatefulResponses {
  constructor(
    readonly responses: ResponseStore,
    readonly conversations: ConversationStore,
    private readonly logger: Logger,
  ) {}

  /** The call's stored context, expanded into its body (404 for a stored object the account does not have). */
  async expand(accountId: string, body: ResponsesRequest, bodyBytes: number | undefined): Promise<StatefulCall> {
    if (body.background === true) {
      throw invalid('background', 'background: background responses are not supported by the gateway; leave background out (or false) and wait for the reply or stream it');
    }
    const previousResponseId = body.previous_response_id ?? null;
    const conversationId = conversationIdOf((body as RawObject).conversation);
    if (previousResponseId !== null && conversationId !== null) {
      throw invalid('conversation', 'conversation: previous_response_id and conversation cannot be used together; send one of them');
    }
    const state: StatefulCall = { responseId: randomId('resp'), store: body.store !== false, previousResponseId, conversationId, body, context: [], addedBytes: 0 };
    const own = inputItems(body.input);
    if (state.store || conversationId !== null) checkItemIds(own, 'input', null);
    const references = own.some((item) => isObject(item) && item.type === 'item_reference');
    if (previousResponseId === null && conversationId === null && !references) return state;

    if (previousResponseId !== null) {
      const stored = await this.responses.context(accountId, previousResponseId);
      if (!stored) throw appError('previousResponseNotFound', previousResponseId);
      state.context = stored.items as RawObject[];
      state.addedBytes += stored.bytes;
    } else if (conversationId !== null) {
      state.context = await this.conversations.items(accountId, conversationId);
      state.addedBytes += jsonBytes(state.context);
    }
    const resolved = references ? await this.resolveReferences(accountId, own, state) : own;
    const input = state.context.filter(replayable).map(contextItem);
    for (const item of resolved) input.push(item);
    if (input.length > MAX_CONTEXT_ITEMS) {
      throw invalid('input', `input: with its stored context the input holds ${input.length} items; at most ${MAX_CONTEXT_ITEMS} are taken`);
    }
    const total = (bodyBytes ?? jsonBytes(body)) + state.addedBytes;
    if (total > BODY_LIMIT) {
      throw appError('contextTooLarge', { total, limit: BODY_LIMIT }, {
        field: previousResponseId !== null ? 'previous_response_id' : conversationId !== null ? 'conversation' : 'input',
      });
    }
    const { previous_response_id: _previous, conversation: _conversation, ...rest } = body as RawObject;
    state.body = { ...rest, input } as ResponsesRequest;
    return state;
  }

  /** `item_reference` items replaced by the stored items they name (404 naming `input[i].id` for one the account does not have). */
  private async resolveReferences(accountId: string, own: readonly unknown[], state: StatefulCall): Promise<unknown[]> {
    const ids: string[] = [];
    own.forEach((item, i) => {
      if (!isObject(item) || item.type !== 'item_reference') return;
      if (typeof item.id !== 'string' || item.id === '') throw invalid(`input[${i}].id`, `input[${i}].id: an item reference needs the id of a stored item`);
      ids.push(item.id);
    });
    const found = await this.responses.items(accountId, ids);
    for (const item of state.context) if (typeof item.id === 'string' && !found.has(item.id)) found.set(item.id, item);
    return own.flatMap((item, i) => {
      if (!isObject(item) || item.type !== 'item_reference') return [item];
      const stored = found.get(String(item.id));
      if (stored === undefined) throw appError('itemNotFound', String(item.id), { field: `input[${i}].id` });
      if (!replayable(stored)) return [];
      state.addedBytes += jsonBytes(stored);
      return [contextItem(stored)];
    });
  }

  /**
   * Keeps an answered call (store) and grows its conversation:
   * `guardedInput` is the input after input guardrails, `output` the output
   * items with encrypted reasoning as the upstream returned it. Resolves
   * (never rejects: a failed write is logged) when both writes are
   * committed; the reply waits for it, so a follow-up that reaches another
   * instance finds what this one answered.
   */
  keep(owner: Owner, state: StatefulCall, guardedInput: unknown, response: RawObject, output: RawObject[]): Promise<unknown> {
    const items = inputItems(guardedInput);
    const input = state.context.slice();
    for (let i = state.context.length; i < items.length; i++) input.push(keptItem(items[i]));
    const writes: Promise<unknown>[] = [];
    if (state.store) {
      writes.push(this.responses.save({
        id: state.responseId,
        accountId: owner.accountId,
        apiKeyId: owner.apiKeyId,
        requestId: owner.requestId,
        previousResponseId: state.previousResponseId,
        conversationId: state.conversationId,
        response,
        input,
        ownFrom: state.context.length,
        output,
      }));
    }
    if (state.conversationId !== null) {
      const added = input.slice(state.context.length);
      for (const item of output) added.push(item);
      writes.push(
        this.conversations.append(owner.accountId, state.conversationId, added).catch((error: unknown) =>
          this.logger.error({ err: error, request_id: owner.requestId, conversation_id: state.conversationId }, 'could not add a response to its conversation'),
        ),
      );
    }
    return Promise.all(writes);
  }
}
