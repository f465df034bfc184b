import { KEY_SORTS, KEY_STATUSES, type ApiKeyService } from '../../domain/keys/api-key.service';
import { DIMENSIONS } from '../../domain/keys/key-input';
import type { KeyRotationService } from '../../domain/keys/key-rotation.service';
import type { SessionService } from '../../domain/auth/session.service';
import type { AccountService } from '../../domain/accounts/account.service';
import type { AuditService } from '../../domain/audit/audit.service';
import type { OperationHandler } from '../../http/openapi-router';
import { actorOf, mutatorOf } from '../request-actor';
import { keyDefaultsInput } from './account.mapper';
import { createKeyInput, createdKey, keySummary, rotateKeyInput, updateKeyInput } from './key.mapper';
import { enumParam, intParam, stringParam } from './query-params';
import { loginInput } from './session.mapper';

export function sessionHandlers(sessions: SessionService): Record<string, OperationHandler> {
  return {
    createSession: async ({ request, reply, body }) => {
      const { email, password } = loginInput(body);
      const grant = await sessions.login(email, password, request.ip);
      void reply.code(201);
      return { token: grant.token, expires_at: grant.expiresAt.toISOString(), user: { id: grant.user.id, email: grant.user.email, role: grant.user.role, account_id: grant.user.accountId } };
    },
    deleteCurrentSession: async ({ request, reply }) => {
      await sessions.logout(request.headers.authorization);
      void reply.code(204);
      return null;
    },
  };
}

/** The account's defaults for new keys (docs/architecture.md §18). */
export function keyDefaultsHandlers(accounts: AccountService): Record<string, OperationHandler> {
  return {
    getKeyDefaults: async ({ request }) => ({ rate_limit: (await accounts.keyDefaults(actorOf(request))).rateLimit }),
    setKeyDefaults: async ({ request, body }) => ({ rate_limit: (await accounts.setKeyDefaults(mutatorOf(request), keyDefaultsInput(body))).rateLimit }),
  };
}

export function keyHandlers(keys: ApiKeyService, rotations: KeyRotationService, audit: AuditService): Record<string, OperationHandler> {
  return {
    listKeys: async ({ request, query }) => {
      const page = await keys.list(actorOf(request), {
        page: intParam(query, 'page', 1, 1, 1_000_000),
        pageSize: intParam(query, 'page_size', 20, 1, 100),
        status: enumParam(query, 'status', KEY_STATUSES),
        dimension: enumParam(query, 'dimension', DIMENSIONS),
        q: stringParam(query, 'q', 64),
        sort: enumParam(query, 'sort', KEY_SORTS) ?? 'created_at',
        order: enumParam(query, 'order', ['asc', 'desc'] as const) ?? 'desc',
      });
      return { total: page.total, page: page.page, page_size: page.pageSize, items: page.items.map(keySummary) };
    },
    createKey: async ({ request, reply, body }) => {
      const created = await keys.create(mutatorOf(request), createKeyInput(body));
      void reply.code(201);
      return createdKey(created);
    },
    getKey: async ({ request, params }) => keySummary(await keys.get(actorOf(request), params.api_key_id!)),
    updateKey: async ({ request, params, body }) => {
      return keySummary(await keys.update(mutatorOf(request), params.api_key_id!, updateKeyInput(body)));
    },
    suspendKey: async ({ request, params }) => keySummary(await keys.suspend(actorOf(request), params.api_key_id!)),
    resumeKey: async ({ request, params }) => keySummary(await keys.resume(actorOf(request), params.api_key_id!)),
    cancelKey: async ({ request, params }) => keySummary(await keys.cancel(actorOf(request), params.api_key_id!)),
    rotateKey: async ({ request, reply, params, body }) => {
      const rotated = await rotations.rotate(mutatorOf(request), params.api_key_id!, rotateKeyInput(body));
      void reply.code(201);
      return createdKey(rotated);
    },
    listAuditEvents: async ({ request, query }) => {
      const page = intParam(query, 'page', 1, 1, 1_000_000);
      const pageSize = intParam(query, 'page_size', 50, 1, 200);
      const apiKeyId = stringParam(query, 'api_key_id', 40);
      const result = await audit.list(actorOf(request), { page, pageSize, ...(apiKeyId ? { apiKeyId } : {}) });
      return {
        total: result.total,
        page,
        page_size: pageSize,
        items: result.items.map((e) => ({
          id: e.id,
          actor: e.actor,
          actor_user_id: e.actorUserId,
          action: e.action,
          api_key_id: e.apiKeyId,
          changes: e.changes,
          ip: e.ip,
          created_at: e.createdAt.toISOString(),
        })),
      };
    },
  };
}
