// One answered call: the post-guardrail event stream of its upstream's reply,
// and the usage record it ends with (docs/architecture.md §7). Made by the pipeline once a
// deployment answered; served by the form's encoder.
import { priceCall, responseUsage, unifyUsage, type MeteredTokens, type ResponseUsage } from '../metering/tiers';
import type { Reservation } from '../metering/credit-ledger';
import type { RateAdmission } from '../metering/rate-limiter';
import type { UsageRecorder, UsageRecordInput, UsageStatus } from '../metering/usage-recorder';
import type { Guardrails } from '../guardrails/guardrail-engine';
import type { SentRequest } from '../providers/sent-request';
import { headerToken } from '../http/header-token';
import { countTokensYielding } from '../tokenizer';
import type { Catalog, Deployment, Tier } from '../core/catalog.types';
import type { CanonicalEvent, CanonicalRequest, ProtocolForm, StopReason, UpstreamUsage } from '../core/canonical';
import type { AuthenticatedKey } from './key-auth';

export interface CallContext {
  requestId: string;
  key: AuthenticatedKey;
  form: ProtocolForm;
  /** Aborted when the client disconnects. */
  signal: AbortSignal;
  startedAt: number;
  /** The request body's bytes as received (Content-Length), when the request said; with its stored context, when it names one. */
  bodyBytes?: number;
  /** The Responses form's `resp_…` id of the call: its usage record names it. */
  responseId?: string;
  /**
   * From now on, cut the call (abort `signal` with the refusal) if its key
   * stops being usable. Streams call it: their client gets what was produced
   * and an error event, while a plain reply in flight is better delivered than
   * billed and lost.
   */
  followKey?: () => void;
}

export interface RouteInfo {
  tier: Tier;
  score: number;
  reasons: string[];
  deployment: Deployment;
  thinking: boolean;
}

/** What a call needs of the pipeline's services: the prices and the usage recorder. */
export interface CallDeps {
  catalog: Catalog;
  recorder: UsageRecorder;
}

/** The `x-route` header: why this request went where it went (the catalog's model name as a header-safe token). */
export const routeHeader = (r: RouteInfo): string =>
  `tier=${r.tier}; score=${r.score.toFixed(2)}; reasons=${r.reasons.join(',') || 'none'}; model=${headerToken(r.deployment.model)}`;
/**
 * An answered call in progress. `events()` yields the post-guardrail event
 * stream (its first upstream event already in hand, so fallback is over);
 * `finish()` meters it once and resolves when the usage record is committed.
 * A call cut before its first upstream event, once its request reached the
 * upstream, is one with no events, metered the same way.
 */
export class Call {
  private raw: UpstreamUsage = { inputCacheHit: 0, inputCacheMiss: 0, output: 0 };
  private producedText = '';
  /** The upstream's message_stop was seen: its usage is final and billed as is. */
  private complete = false;
  /** The upstream reported input (Anthropic's message_start does; OpenAI only in its last chunk). */
  private inputReported = false;
  /** The upstream reported output (a final figure once the call is complete). */
  private outputReported = false;
  /** Some figure of the record is a local count, not the upstream's. */
  private estimated = false;
  private final: Promise<MeteredTokens> | null = null;
  private finished: Promise<ResponseUsage> | null = null;
  /** events() or forEach() has taken the upstream's events (and closes the exchange when it ends). */
  private consumed = false;
  private firstEventAt: number | null = null;
  /** The upstream produced thinking (a thinking or redacted_thinking block): billed as thinking whatever the tier. */
  private thought = false;
  stopReason: StopReason | null = null;
  stopSequence: string | null = null;

  constructor(
    private readonly deps: CallDeps,
    private readonly ctx: CallContext,
    readonly request: CanonicalRequest,
    readonly route: RouteInfo,
    /** The neutral model the requested name resolved to. */
    readonly model: string,
    private readonly first: IteratorResult<CanonicalEvent>,
    private readonly rest: AsyncIterator<CanonicalEvent>,
    private readonly filter: ReturnType<Guardrails['createOutputFilter']>,
    private readonly inputHits: Record<string, number>,
    /** The caller's fields a translation to the deployment's protocol left out (empty on pass-through). */
    readonly dropped: readonly string[],
    /** The credit admission reserved for the call (null: its account has no limit). */
    readonly reservation: Reservation | null = null,
    /** What the attempt sent its upstream: the input billed when the upstream's own figure never comes. */
    private readonly sent: SentRequest | null = null,
    /** What the key's rate limit took for the call (null: the key has none): the slot ends and the tokens settle when it is metered. */
    readonly rate: RateAdmission | null = null,
  ) {}

  get requestId(): string {
    return this.ctx.requestId;
  }

  get accountId(): string {
    return this.ctx.key.account.id;
  }

  get apiKeyId(): string {
    return this.ctx.key.keyId;
  }

  /** Aborted when the client goes away or the gateway cuts the call; `reason` says which. */
  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  /** See CallContext.followKey. */
  followKey(): void {
    this.ctx.followKey?.();
  }

  /** The id of the message we answer with (`msg_…`), traceable to the request id. */
  get messageId(): string {
    return `msg_${this.ctx.requestId.replace(/^req_/, '')}`;
  }

  /** Which price class bills the call: thinking when routed to the thinking tier or the upstream thought. */
  get thinking(): boolean {
    return this.route.thinking || this.thought;
  }

  private observe(e: CanonicalEvent): void {
    if (this.firstEventAt === null) this.firstEventAt = Date.now();
    switch (e.type) {
      case 'usage':
        this.raw = { ...this.raw, ...e.usage };
        if (e.usage.inputCacheHit !== undefined || e.usage.inputCacheMiss !== undefined) this.inputReported = true;
        if (e.usage.output !== undefined) this.outputReported = true;
        break;
      case 'message_stop':
        this.complete = true;
        break;
      case 'block_start':
        if (e.block.type === 'thinking' || (e.block.type === 'other' && e.block.raw.type === 'redacted_thinking')) this.thought = true;
        break;
      case 'text_delta':
      case 'thinking_delta':
        this.producedText += e.text;
        break;
      case 'tool_input_delta':
        this.producedText += e.partialJson;
        break;
      default:
        break;
    }
  }

  /** One upstream event through the output guardrails: what the client gets for it. */
  private pass(e: CanonicalEvent): CanonicalEvent[] {
    this.observe(e);
    const out = this.filter.push(e);
    for (const filtered of out) {
      if (filtered.type === 'message_stop') {
        this.stopReason = filtered.stopReason;
        this.stopSequence = filtered.stopSequence ?? null;
      }
    }
    return out;
  }

  /** Events after output guardrails; `message_stop` ends the stream. */
  async *events(): AsyncGenerator<CanonicalEvent> {
    this.consumed = true;
    let next = this.first;
    try {
      while (!next.done) {
        for (const out of this.pass(next.value)) yield out;
        next = await this.rest.next();
      }
      for (const out of this.filter.end()) yield out;
    } finally {
      // A consumer that stops at message_stop (or leaves early) must still
      // let the adapter finish its exchange, so its socket returns to the pool.
      if (!next.done) await this.rest.return?.().catch(() => undefined);
    }
  }

  /**
   * The same events as `events()`, handed to `take` as they come: a plain
   * reply needs no generator between the adapter and its collector (one
   * promise and result object less per event).
   */
  async forEach(take: (e: CanonicalEvent) => void): Promise<void> {
    this.consumed = true;
    let next = this.first;
    try {
      while (!next.done) {
        for (const out of this.pass(next.value)) take(out);
        next = await this.rest.next();
      }
      for (const out of this.filter.end()) take(out);
    } finally {
      if (!next.done) await this.rest.return?.().catch(() => undefined);
    }
  }

  /** Closes the upstream exchange of a call whose events were never read (its reply could not even begin). */
  async discard(): Promise<void> {
    if (this.consumed || this.first.done) return;
    this.consumed = true;
    await this.rest.return?.().catch(() => undefined);
  }

  /** Usage as it stands (unified), e.g. for `message_start`. */
  usageSoFar(): ResponseUsage {
    return responseUsage(unifyUsage(this.raw, this.route.deployment.unify, this.thinking));
  }

  /**
   * The call's final usage (unified), as the record will bill it, computed
   * once: what a reply must carry before the record is committed.
   */
  async finalUsage(): Promise<ResponseUsage> {
    return responseUsage(await this.finalTokens());
  }

  finish(status: UsageStatus, errorCode: string | null = null): Promise<ResponseUsage> {
    this.finished ??= this.meter(status, errorCode);
    return this.finished;
  }

  private finalTokens(): Promise<MeteredTokens> {
    // An ordinary call reported everything: no count, and no async step on the way to its record.
    const reported = this.complete && this.outputReported && (this.inputReported || !this.sent?.reached);
    this.final ??= reported
      ? Promise.resolve(unifyUsage(this.raw, this.route.deployment.unify, this.thinking))
      : this.countMissing().then(() => unifyUsage(this.raw, this.route.deployment.unify, this.thinking));
    return this.final;
  }

  /**
   * Where the upstream's own figures never came, local counts (docs/architecture.md §10),
   * and the record says `estimated`. The upstream's figures win wherever
   * they arrived.
   */
  private async countMissing(): Promise<void> {
    // Output: an interrupted stream never got its final usage, and some
    // compatible servers report none: bill what was produced. Usage seen so
    // far is no floor of that: Anthropic's message_start already says
    // output_tokens 1, however much text follows before the cut.
    if (!this.complete || !this.outputReported) {
      const produced = await countTokensYielding(this.producedText);
      if (!this.outputReported || produced > this.raw.output) {
        this.raw = { ...this.raw, output: Math.max(this.raw.output, produced) };
        this.estimated = true;
      }
    }
    // Input: OpenAI-protocol upstreams report it only at the end, and an
    // abort before the first byte hears nothing; the upstream charges the
    // prompt it was sent all the same, so that is billed, as cache misses.
    if (!this.inputReported && this.sent?.reached) {
      this.raw = { ...this.raw, inputCacheHit: 0, inputCacheMiss: await this.sent.inputTokens() };
      this.estimated = true;
    }
  }

  private async meter(status: UsageStatus, errorCode: string | null): Promise<ResponseUsage> {
    // The upstream exchange is over: the key's concurrency slot is free whatever the record's fate.
    this.rate?.end();
    const tokens = await this.finalTokens();
    this.rate?.settleTokens(tokens.inputCacheHit + tokens.inputCacheMiss + tokens.output);
    let hits = this.inputHits;
    for (const rule in this.filter.hits) {
      if (hits === this.inputHits) hits = { ...this.inputHits };
      hits[rule] = (hits[rule] ?? 0) + this.filter.hits[rule]!;
    }
    await this.deps.recorder.record(
      usageInput(this.ctx, { requested: this.request.model, model: this.model, stream: this.request.stream, reservation: this.reservation }, {
        routedModel: this.route.deployment.model,
        provider: this.route.deployment.provider.name,
        routeTier: this.route.tier,
        routeScore: this.route.score,
        routeReasons: this.route.reasons,
        thinking: this.thinking,
        status,
        errorCode,
        raw: this.raw,
        tokens,
        estimated: this.estimated,
        amounts: priceCall(tokens, this.deps.catalog.prices),
        guardrailHits: hits,
        latencyMs: Date.now() - this.ctx.startedAt,
        ttftMs: this.firstEventAt === null ? null : this.firstEventAt - this.ctx.startedAt,
      }),
    );
    return responseUsage(tokens);
  }
}

/** What a usage record says beyond whose call it was. */
type CallOutcome = Omit<UsageRecordInput, 'requestId' | 'responseId' | 'accountId' | 'accountTimezone' | 'apiKeyId' | 'form' | 'model' | 'requestedModel' | 'stream' | 'at' | 'reservation'>;

/**
 * A call's usage record, answered or not: whose call it was, from the
 * context, and its outcome. One object literal, so every record has one
 * shape (a spread followed by more fields grew each record's property store
 * step by step, on every call).
 */
/** Whose call it was: the name the caller asked for, the neutral model it resolved to, streamed or not. */
export interface CallIdentity {
  requested: string;
  model: string;
  stream: boolean;
  /** What admission reserved, settled by this record. */
  reservation?: Reservation | null;
}

export function usageInput(ctx: CallContext, request: CallIdentity, outcome: CallOutcome): UsageRecordInput {
  return {
    requestId: ctx.requestId,
    responseId: ctx.responseId ?? null,
    accountId: ctx.key.account.id,
    accountTimezone: ctx.key.account.timezone,
    apiKeyId: ctx.key.keyId,
    form: ctx.form,
    model: request.model,
    requestedModel: request.requested,
    stream: request.stream,
    reservation: request.reservation ?? null,
    routedModel: outcome.routedModel,
    provider: outcome.provider,
    routeTier: outcome.routeTier,
    routeScore: outcome.routeScore,
    routeReasons: outcome.routeReasons,
    thinking: outcome.thinking,
    status: outcome.status,
    errorCode: outcome.errorCode,
    raw: outcome.raw,
    tokens: outcome.tokens,
    estimated: outcome.estimated,
    amounts: outcome.amounts,
    guardrailHits: outcome.guardrailHits,
    latencyMs: outcome.latencyMs,
    ttftMs: outcome.ttftMs,
  };
}

