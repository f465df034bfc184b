// The GraphQL resolvers get their services through their constructors and a
// small request context: they answer without Apollo, Fastify or PostgreSQL,
// from the services they were built with, through the control-plane gate.
import { expect } from 'chai';
import { execute, parse, type ExecutionResult } from 'graphql';
import pino from 'pino';
import { CONTROL_PLANE_LIMITS, ControlPlaneGate } from '../../../src/control-plane/control-plane-gate';
import type { ControlPlaneServices } from '../../../src/control-plane/control-plane-services';
import type { GraphqlContext } from '../../../src/control-plane/graphql/common/context';
import { buildGraphqlSchema } from '../../../src/control-plane/graphql/schema';
import type { Actor } from '../../../src/domain/actor';
import type { GuardrailRuleView } from '../../../src/domain/guardrails/guardrail-policy.service';
import { appError } from '../../../src/errors';

const owner: Actor = { accountId: 'acct-1', userId: 'user-1', label: 'owner@example.com', role: 'owner', ip: '127.0.0.1' };

/** A service the test does not expect to be called: any use fails the test with its name. */
function untouched<T>(name: string): T {
  return new Proxy(
    {},
    {
      get: (_target, property) => {
        throw new Error(`${name}.${String(property)} was used`);
      },
    },
  ) as T;
}

describe('GraphQL resolvers', () => {
  /** Each guardrailPolicies call: its account and how many gate turns were taken while it ran. */
  const policyCalls: { accountId: string; running: number }[] = [];
  const purgeCalls: { accountId: string; running: number }[] = [];
  const gate = new ControlPlaneGate({ ...CONTROL_PLANE_LIMITS, timeoutMs: 5_000 });
  const services: ControlPlaneServices = {
    sessions: untouched('sessions'),
    accounts: untouched('accounts'),
    keys: untouched('keys'),
    rotations: untouched('rotations'),
    audit: untouched('audit'),
    usage: untouched('usage'),
    storedResponses: {
      purge: async (actor: Actor): Promise<number> => {
        purgeCalls.push({ accountId: actor.accountId, running: gate.load.running });
        return 3;
      },
    } as unknown as ControlPlaneServices['storedResponses'],
    webhooks: untouched('webhooks'),
    guardrailPolicies: {
      list: async (actor: Actor): Promise<GuardrailRuleView[]> => {
        policyCalls.push({ accountId: actor.accountId, running: gate.load.running });
        return [{ rule: 'email', category: 'pii', defaultPolicy: 'redact', policy: 'block', overridden: true, updatedAt: new Date('2026-11-01T00:00:00Z') }];
      },
    } as unknown as ControlPlaneServices['guardrailPolicies'],
    catalog: { models: [{ name: 'qwen-large', displayName: 'Qwen Large', createdAt: 1_700_000_000 }] } as unknown as ControlPlaneServices['catalog'],
    controlPlane: gate,
  };

  const run = async (query: string, context: Partial<GraphqlContext> = {}): Promise<ExecutionResult> =>
    execute({
      schema: await buildGraphqlSchema(services),
      document: parse(query),
      contextValue: {
        actor: owner,
        sessions: services.sessions,
        gate: services.controlPlane,
        ip: '127.0.0.1',
        authorization: undefined,
        log: pino({ level: 'silent' }),
        ...context,
      } satisfies GraphqlContext,
    });

  it('answers from the services the resolver was built with', async () => {
    const result = await run('{ models { name displayName } }');
    expect(result.errors).to.equal(undefined);
    expect(result.data).to.deep.equal({ models: [{ name: 'qwen-large', displayName: 'Qwen Large' }] });
  });

  it('passes a database-backed field through the gate with the caller’s account', async () => {
    const result = await run('{ guardrailPolicies { rule policy overridden updatedAt } }');
    expect(result.errors).to.equal(undefined);
    expect(result.data).to.deep.equal({ guardrailPolicies: [{ rule: 'email', policy: 'block', overridden: true, updatedAt: '2026-11-01T00:00:00.000Z' }] });
    expect(policyCalls).to.deep.equal([{ accountId: 'acct-1', running: 1 }]);
    expect(gate.load).to.deep.equal({ running: 0, waiting: 0 });
  });

  it('passes the stored-response purge (batched deletes) through the gate too', async () => {
    const result = await run('mutation { purgeStoredResponses }');
    expect(result.errors).to.equal(undefined);
    expect(result.data).to.deep.equal({ purgeStoredResponses: 3 });
    expect(purgeCalls).to.deep.equal([{ accountId: 'acct-1', running: 1 }]);
  });

  it('asks the session service for the precise 401 when the request brought no caller', async () => {
    const refused = appError('missingSession');
    const result = await run('{ models { name } }', {
      actor: null,
      sessions: {
        authenticate: async () => {
          throw refused;
        },
      },
    });
    expect(result.data).to.equal(null);
    expect(result.errors?.map((e) => e.originalError)).to.deep.equal([refused]);
  });
});
