// One query's way through the gateway, whatever its protocol form:
// scope → input guardrails → complexity assessment → deployment choice with
// fallback before the first byte → output guardrails → metering.
import type { Logger } from 'pino';
import { AppError, appError, ERRORS } from '../errors';
import { GuardrailBlockedError, type Guardrails, type InputInspector } from '../guardrails/guardrail-engine';
import type { CreditLedger, Reservation } from '../metering/credit-ledger';
import type { RateAdmission, RateLimiter } from '../metering/rate-limiter';
import { mulCeil } from '../core/decimal';
import { worstCase, type WorstCase } from '../metering/worst-case';
import { priceCall } from '../metering/tiers';
import type { UsageRecorder, UsageStatus } from '../metering/usage-recorder';
import { UpstreamError, type ProviderAdapter } from '../providers/provider';
import { SentRequest } from '../providers/sent-request';
import type { Catalog, Deployment, ProviderType, Tier } from '../core/catalog.types';
import type { CircuitBreaker } from '../routing/circuit-breaker';
import { assessComplexity } from '../routing/complexity';
import { boundByEffort } from '../routing/effort';
import { Call, usageInput, type CallContext, type CallIdentity, type RouteInfo } from './call';
import type { CanonicalEvent, CanonicalRequest, RawObject } from '../core/canonical';

export interface PipelineDeps {
  catalog: Catalog;
  providers: { forType(type: ProviderType): ProviderAdapter };
  guardrails: (accountId: string) => Promise<Guardrails>;
  recorder: UsageRecorder;
  breaker: CircuitBreaker;
  logger: Logger;
  /** Admission against the accounts' credit limits (docs/architecture.md §9). */
  credit: CreditLedger;
  /** Admission against the keys' rate limits (docs/architecture.md §18). */
  rates: RateLimiter;
}

export const deploymentId = (d: Deployment): string => `${d.provider.name}/${d.model}`;
/**
 * A call as its protocol form received it: the caller's body, and how to read
 * it. The pipeline runs the input guardrails over the body before anything
 * else reads it, so routing, translation and pass-through all see the
 * redacted body.
 */
export interface InboundCall {
  /** The model name the caller sent. */
  model: string;
  stream: boolean;
  body: RawObject;
  /** Every text the upstream will read, through `inspect`: the body to use (the same object when nothing was redacted). */
  guard(body: RawObject, inspect: InputInspector): RawObject;
  /** The canonical view of the guarded body (400 for what the schema cannot say). */
  decode(body: RawObject): CanonicalRequest;
}
export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  get thresholds() {
    return this.deps.catalog.assessment;
  }

  /**
   * The neutral model a requested name stands for (its own name or an alias,
   * docs/architecture.md §5): known (404) and, by its neutral name, in the key's scope (403).
   */
  resolveModel(ctx: CallContext, model: string) {
    const entry = this.deps.catalog.resolveModel(model);
    if (!entry) throw appError('modelNotFound', model);
    if (!ctx.key.modelScope.has(entry.name)) {
      const named = entry.name === model ? `"${model}"` : `"${entry.name}" (requested as "${model}")`;
      throw appError('modelNotInScope', named);
    }
    return entry;
  }

  /**
   * The exact input token count of a request (unified), from the upstream of
   * the model's standard route when its protocol can count (Anthropic's
   * count_tokens), or undefined when it cannot or is unreachable (the caller
   * then counts locally). What the upstream reads passes the input guardrails
   * first. Nothing is billed.
   */
  async countUpstream(ctx: CallContext, inbound: InboundCall): Promise<number | undefined> {
    const model = this.resolveModel(ctx, inbound.model);
    const deployment = model.routes.standard[0];
    const adapter = deployment ? this.deps.providers.forType(deployment.provider.type) : undefined;
    if (!deployment || !adapter?.countTokens) return undefined;
    const guardrails = await this.deps.guardrails(ctx.key.account.id);
    const request = inbound.decode(inbound.guard(inbound.body, guardrails.inputInspector()));
    try {
      const raw = await adapter.countTokens({ request, deployment, signal: ctx.signal, dropped: [] });
      return mulCeil(raw, deployment.unify.input);
    } catch (error) {
      if (!(error instanceof UpstreamError) || !error.retryable) throw error instanceof UpstreamError ? upstreamAppError(error) : error;
      this.deps.logger.warn({ request_id: ctx.requestId, deployment: deploymentId(deployment), failure: error.failure }, 'count_tokens upstream failed; counting locally');
      return undefined;
    }
  }

  async start(ctx: CallContext, inbound: InboundCall): Promise<Call> {
    const model = this.resolveModel(ctx, inbound.model);
    const guardrails = await this.deps.guardrails(ctx.key.account.id);
    const inspect = guardrails.inputInspector();
    let body: RawObject;
    try {
      body = inbound.guard(inbound.body, inspect);
    } catch (error) {
      if (error instanceof GuardrailBlockedError) {
        await this.recordRefusal(ctx, { requested: inbound.model, model: model.name, stream: inbound.stream }, 'blocked', error.code, { [error.rule]: 1 });
      }
      throw error;
    }
    const request = inbound.decode(body);
    const identity: CallIdentity = { requested: inbound.model, model: model.name, stream: request.stream };
    const assessment = boundByEffort(assessComplexity(request, this.deps.catalog.assessment), request.effort, request.thinking?.type === 'enabled');
    const tier = assessment.tier;
    const candidates = model.routes[tier];
    const filter = () => guardrails.createOutputFilter();
    const worst = this.worstCaseFor(ctx, inbound, request, candidates, inspect.hits, tier === 'thinking');
    // The key's rate limit first: a refusal there takes nothing from the account's credit.
    const rated = ctx.key.rateLimit ? this.deps.rates.admit(ctx.key.keyId, ctx.key.rateLimit, worst?.tokens ?? 0) : null;
    const rate = rated instanceof Promise ? await rated : rated;
    let reservation: Reservation | null;
    try {
      const admitted = worst && ctx.key.account.creditLimitMicros !== null ? this.admit(request, ctx, worst) : null;
      reservation = admitted instanceof Promise ? await admitted : admitted;
    } catch (error) {
      // Refused for credit: the call never was, for the rate limit too.
      rate?.undo();
      throw error;
    }
    try {
      return await this.answer(ctx, request, model.name, { tier, assessment, candidates, filter, inspect, identity: { ...identity, reservation }, rate });
    } catch (error) {
      // Nothing was metered for it (a refusal record costs nothing): the reservation goes back, and the call's slot and tokens.
      reservation?.release();
      rate?.end();
      rate?.settleTokens(0);
      throw error;
    }
  }

  /**
   * The most the call can cost and be metered (docs/architecture.md §9), when its account
   * has a credit limit or its key a tokens-per-minute limit; the upstream is
   * then bound to the output it was reserved for. Null when neither needs it.
   */
  private worstCaseFor(
    ctx: CallContext,
    inbound: InboundCall,
    request: CanonicalRequest,
    deployments: readonly Deployment[],
    hits: Record<string, number>,
    thinkingRoute: boolean,
  ): WorstCase | null {
    if (ctx.key.account.creditLimitMicros === null && (ctx.key.rateLimit?.tokensPerMinute ?? null) === null) return null;
    let redactions = 0;
    for (const rule in hits) redactions += hits[rule]!;
    // The upstream must not produce more than was reserved for, even where the caller set no bound.
    request.boundOutput = true;
    return worstCase({
      request,
      deployments,
      prices: this.deps.catalog.prices,
      bodyBytes: ctx.bodyBytes ?? Buffer.byteLength(JSON.stringify(inbound.body)),
      redactions,
      thinkingRoute,
    });
  }

  /**
   * Reserves the call's worst case against its account's credit limit, or
   * throws the limit's 429; lowers max_tokens when the account chose that and
   * the reservation says so.
   */
  private admit(request: CanonicalRequest, ctx: CallContext, worst: WorstCase): Reservation | Promise<Reservation> {
    const lowerTo = (reservation: Reservation): Reservation => {
      if (reservation.lowered) request.maxTokens = reservation.lowered.to;
      return reservation;
    };
    const admitted = this.deps.credit.admit({ account: ctx.key.account, worst });
    return admitted instanceof Promise ? admitted.then(lowerTo) : lowerTo(admitted);
  }

  private async answer(
    ctx: CallContext,
    request: CanonicalRequest,
    modelName: string,
    plan: {
      tier: Tier;
      assessment: { score: number; reasons: string[] };
      candidates: readonly Deployment[];
      filter: () => ReturnType<Guardrails['createOutputFilter']>;
      inspect: ReturnType<Guardrails['inputInspector']>;
      /** Whose call it is, with what admission reserved for it. */
      identity: CallIdentity;
      /** What the key's rate limit took for it. */
      rate: RateAdmission | null;
    },
  ): Promise<Call> {
    const { tier, assessment, candidates, filter, inspect, identity, rate } = plan;
    const reservation = identity.reservation ?? null;

    let lastError: UpstreamError | undefined;
    /** The last failure that was not a 429: it decides the answer when no deployment answered. */
    let failed: UpstreamError | undefined;
    const skipped: Deployment[] = [];
    // The soonest a rate-limited deployment of the tier frees up (ms from now), when one is.
    let soonest = Number.POSITIVE_INFINITY;
    const attempt = async (deployment: Deployment): Promise<Call | 'next' | 'stop'> => {
      const route: RouteInfo = {
        tier,
        score: assessment.score,
        reasons: assessment.reasons,
        deployment,
        thinking: tier === 'thinking',
      };
      const adapter = this.deps.providers.forType(deployment.provider.type);
      const dropped: string[] = [];
      const sent = new SentRequest();
      const iterator = adapter.stream({ request, deployment, signal: ctx.signal, dropped, sent })[Symbol.asyncIterator]();
      const call = (first: IteratorResult<CanonicalEvent>): Call =>
        new Call(this.deps, ctx, request, route, modelName, first, iterator, filter(), inspect.hits, dropped, reservation, sent, rate);
      try {
        const first = await iterator.next();
        this.deps.breaker.success(deploymentId(deployment));
        return call(first);
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        if (error.failure === 'aborted') {
          // Gone before the first byte, or cut by the gateway's shutdown (the reason says which): still one record.
          // Once the request reached the upstream, the upstream charges its prompt: billed as sent, by a local count.
          const cut: unknown = ctx.signal.reason;
          const status: UsageStatus = cut instanceof AppError ? 'upstream_error' : 'client_aborted';
          const code = cut instanceof AppError ? cut.code : sent.reached ? 'client_aborted' : 'aborted_before_upstream';
          if (sent.reached) await call({ done: true, value: undefined }).finish(status, code).catch((failure: unknown) => this.recordFailed(ctx, failure));
          else await this.recordRefusal(ctx, identity, status, code);
          if (cut instanceof AppError) throw cut;
          throw appError('clientClosed');
        }
        lastError = error;
        if (error.failure === 'http' && error.status === 429) soonest = Math.min(soonest, this.deps.breaker.rateLimited(deploymentId(deployment), error.retryAfterMs));
        else {
          failed = error;
          // A refusal of the request itself (400, 401, 404) is an answer: the deployment is up.
          if (error.retryable) this.deps.breaker.failure(deploymentId(deployment));
          else this.deps.breaker.success(deploymentId(deployment));
        }
        this.deps.logger.warn(
          { request_id: ctx.requestId, deployment: deploymentId(deployment), failure: error.failure, status: error.status, retry_after_ms: error.retryAfterMs },
          'upstream failed before the first byte',
        );
        return error.retryable ? 'next' : 'stop';
      }
    };
    for (const deployment of candidates) {
      const id = deploymentId(deployment);
      // A rate-limited deployment is not called before its window has passed, whatever else happens.
      const wait = this.deps.breaker.limitedFor(id);
      if (wait > 0) {
        soonest = Math.min(soonest, wait);
        continue;
      }
      // A cooled-down deployment is skipped while another may answer.
      if (!this.deps.breaker.tryAcquire(id)) {
        skipped.push(deployment);
        continue;
      }
      const outcome = await attempt(deployment);
      if (outcome instanceof Call) return outcome;
      if (outcome === 'stop') break;
    }
    if (lastError === undefined && skipped[0]) {
      // Every circuit is open: try the first deployment rather than refuse outright.
      const outcome = await attempt(skipped[0]);
      if (outcome instanceof Call) return outcome;
    }
    if (soonest !== Number.POSITIVE_INFINITY && failed === undefined) {
      // Rate limited wherever a call could go (the rest, if any, cooled down): back when the first one frees up.
      await this.recordRefusal(ctx, identity, 'upstream_error', RATE_LIMITED);
      throw rateLimitedError(tier, soonest);
    }
    await this.recordRefusal(ctx, identity, 'upstream_error', failed?.failure ?? 'no_deployment');
    throw upstreamAppError(failed);
  }

  /** A call that never reached an answer is still on record (zero tokens). */
  private async recordRefusal(
    ctx: CallContext,
    request: CallIdentity,
    status: UsageStatus,
    errorCode: string,
    guardrailHits: Record<string, number> = {},
  ): Promise<void> {
    const tokens = { priceTier: 'no_thinking' as const, inputCacheHit: 0, inputCacheMiss: 0, output: 0 };
    await this.deps.recorder
      .record(
        usageInput(ctx, request, {
          routedModel: null,
          provider: null,
          routeTier: null,
          routeScore: null,
          routeReasons: [],
          thinking: false,
          status,
          errorCode,
          raw: { inputCacheHit: 0, inputCacheMiss: 0, output: 0 },
          tokens,
          estimated: false,
          amounts: priceCall(tokens, this.deps.catalog.prices),
          guardrailHits,
          latencyMs: Date.now() - ctx.startedAt,
          ttftMs: null,
        }),
      )
      .catch((error: unknown) => this.recordFailed(ctx, error));
  }

  private recordFailed(ctx: CallContext, error: unknown): void {
    this.deps.logger.error({ err: error, request_id: ctx.requestId }, 'could not record a call that got no answer');
  }
}

/** The code of a call refused because every deployment of its tier is rate limited (reply and usage record). */
const RATE_LIMITED = ERRORS.upstreamsRateLimited.code;

/**
 * Past this wait the reply says `x-should-retry: false`: the openai client
 * ignores a longer retry-after and would retry within a second into another
 * certain 429, and a client should not sit inside one SDK call for minutes.
 */
const SDK_RETRY_MAX_MS = 60_000;

/**
 * The 429 of a call only rate-limited deployments could serve, in both
 * forms' rate-limit shape (the official clients raise RateLimitError). The
 * wait is until the first of them frees up; the SDKs sleep for it before
 * their retry, which the gateway then sends upstream.
 */
function rateLimitedError(tier: Tier, waitMs: number): AppError {
  const ms = Math.max(1, Math.ceil(waitMs));
  const seconds = Math.ceil(ms / 1000);
  return appError('upstreamsRateLimited', { tier, seconds }, {
    headers: { 'retry-after': String(seconds), 'retry-after-ms': String(ms), 'x-should-retry': ms <= SDK_RETRY_MAX_MS ? 'true' : 'false' },
  });
}

/** What the client sees when no deployment answered before the first byte, and not because all were rate limited. */
export function upstreamAppError(error: UpstreamError | undefined): AppError {
  if (error?.failure === 'http' && error.status !== undefined && error.status < 500) {
    // The upstream refused the request itself (e.g. 400): pass its verdict on.
    return appError(error.status === 404 ? 'upstreamNotFound' : 'upstreamRejected', error.message);
  }
  if (error !== undefined && isOverload(error)) {
    // Real overload keeps Anthropic's own answer for it, which the official clients retry.
    const seconds = Math.max(2, Math.ceil((error.retryAfterMs ?? 0) / 1000));
    return appError('upstreamOverloaded', { headers: { 'retry-after': String(seconds) } });
  }
  const reason = error ? `${error.failure}${error.status ? ` ${error.status}` : ''}` : 'no deployment available';
  return appError('upstreamUnavailable', reason);
}

/** An upstream saying it is overloaded: 529, 503, or Anthropic's `overloaded_error` type. */
function isOverload(error: UpstreamError): boolean {
  return (error.failure === 'http' && (error.status === 529 || error.status === 503)) || error.upstreamType === 'overloaded_error';
}
