// Prometheus metrics of one gateway process, registered in a Registry the
// composition root creates and hands down (no global registry). Labels carry
// catalog names, protocol forms, provider names, guardrail rule names and
// status codes only: never a key id, a secret, a path a caller typed, or
// prompt text, so neither cardinality nor confidentiality depends on callers.
import { collectDefaultMetrics, Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AdmissionCounts } from '../metering/credit-ledger';
import { RATE_KINDS, type RateCounts } from '../metering/rate-limiter';
import type { UsageRecorder, UsageRecordInput } from '../metering/usage-recorder';
import { UpstreamError, type ProviderAdapter, type ProviderCall } from '../providers/provider';
import type { CanonicalEvent } from '../core/canonical';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

interface DeploymentChildren {
  firstEvent: { observe(value: number): void };
  ok: { observe(value: number): void };
  error: { observe(value: number): void };
  cancelled: { observe(value: number): void };
}

export type RequestForm = 'messages' | 'chat_completions' | 'responses' | 'count_tokens' | 'models';

/** The data-plane form of a path, or undefined outside the data plane. */
export function formOfPath(path: string): RequestForm | undefined {
  if (!path.startsWith('/v1/')) return undefined;
  if (path.startsWith('/v1/messages/count_tokens')) return 'count_tokens';
  if (path.startsWith('/v1/messages')) return 'messages';
  if (path.startsWith('/v1/chat/completions')) return 'chat_completions';
  if (path.startsWith('/v1/responses')) return 'responses';
  if (path.startsWith('/v1/models')) return 'models';
  return undefined;
}

export interface GatewayMetricsOptions {
  /** Usage records waiting for their group commit. */
  usageQueueDepth: () => number;
  /** Records committed so far, the seconds their replies waited for the group commit, and its statements (UsageRecorder.commits). */
  usageCommits: () => UsageRecorder['commits'];
  /** The neutral catalog model a requested name (or alias) stands for; undefined labels as `other`. */
  catalogModel: (name: string) => string | undefined;
  /** How credit admissions were decided, and the ledger's round trips to PostgreSQL (CreditLedger.counts). */
  creditAdmissions?: () => AdmissionCounts;
  rateAdmissions?: () => RateCounts;
}

export class GatewayMetrics {
  private readonly requests: Counter<'form' | 'model' | 'status'>;
  private readonly requestSeconds: Histogram<'form' | 'model'>;
  private readonly upstreamFirstEventSeconds: Histogram<'provider' | 'model'>;
  private readonly upstreamSeconds: Histogram<'provider' | 'model' | 'outcome'>;
  private readonly fallbacks: Counter<'provider' | 'model' | 'failure'>;
  private readonly guardrailHits: Counter<'rule'>;
  private readonly creditSuspensions: Counter;
  private readonly usageRecords: Counter<'status'>;
  private readonly keyLookups: Counter<'outcome'>;

  constructor(
    readonly registry: Registry,
    private readonly options: GatewayMetricsOptions,
  ) {
    const registers = [registry];
    // A gauge that reads a figure the gateway keeps anyway (totals, depths) at each scrape.
    const readThrough = (name: string, help: string, read: () => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    };
    collectDefaultMetrics({ register: registry });
    this.requests = new Counter({
      name: 'gateway_requests_total',
      help: 'Data-plane requests answered, by protocol form, requested catalog model and HTTP status',
      labelNames: ['form', 'model', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Data-plane request latency until the reply (or stream) ended',
      labelNames: ['form', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamFirstEventSeconds = new Histogram({
      name: 'gateway_upstream_first_event_seconds',
      help: 'Time from sending an upstream request to its first event, per deployment',
      labelNames: ['provider', 'model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.upstreamSeconds = new Histogram({
      name: 'gateway_upstream_duration_seconds',
      help: 'Time from sending an upstream request to its last event or failure, per deployment',
      labelNames: ['provider', 'model', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.fallbacks = new Counter({
      name: 'gateway_upstream_fallbacks_total',
      help: 'Upstream attempts that failed before the first byte with a retryable error, so the next deployment (if any) was tried',
      labelNames: ['provider', 'model', 'failure'],
      registers,
    });
    this.guardrailHits = new Counter({
      name: 'gateway_guardrail_hits_total',
      help: 'Guardrail matches in metered calls, input and output, by rule',
      labelNames: ['rule'],
      registers,
    });
    this.creditSuspensions = new Counter({
      name: 'gateway_credit_suspensions_total',
      help: 'Data-plane requests refused with 429 because the account reached its monthly credit limit',
      registers,
    });
    this.usageRecords = new Counter({
      name: 'gateway_usage_records_total',
      help: 'Usage records queued for the metering group commit, by call status',
      labelNames: ['status'],
      registers,
    });
    const commits = this.options.usageCommits;
    readThrough('gateway_usage_commit_wait_seconds_total', 'Seconds replies have waited in all for their usage record\'s group commit (divide by gateway_usage_committed_total for the mean)', () => commits().waitSeconds);
    readThrough('gateway_usage_committed_total', 'Usage records committed', () => commits().records);
    readThrough('gateway_usage_commit_batches_total', 'Group-commit statements sent (gateway_usage_committed_total / this is the mean batch)', () => commits().batches);
    readThrough('gateway_usage_commit_statement_seconds_total', 'Seconds the group-commit statements took in all, from send to answer (divide by gateway_usage_commit_batches_total for the mean)', () => commits().statementSeconds);
    this.keyLookups = new Counter({
      name: 'gateway_key_lookups_total',
      help: 'Presented API keys by how they were resolved: cached, found or not_found by a database lookup, not_found_cached (negative cache), refused_busy (too many lookups waiting)',
      labelNames: ['outcome'],
      registers,
    });
    const admissions = this.options.creditAdmissions;
    if (admissions) {
      new Gauge({
        name: 'gateway_credit_admissions_total',
        help: 'Calls of accounts with a credit limit by how admission decided: local (from this process\'s lease), ledger (waited for a lease grow), lowered (max_tokens lowered to fit), refused (429)',
        labelNames: ['path'],
        registers,
        collect() {
          const counts = admissions();
          for (const path of ['local', 'ledger', 'lowered', 'refused'] as const) this.labels(path).set(counts[path]);
        },
      });
      readThrough('gateway_credit_ledger_round_trips_total', 'Round trips to the credit ledger in PostgreSQL (lease grows); accounts far from their limit make one per heartbeat period', () => admissions().grows);
      readThrough('gateway_credit_ledger_wait_seconds_total', 'Seconds calls waited for the credit ledger in all (the `ledger` admissions); every other admission is a few µs of CPU', () => admissions().ledgerWaitSeconds);
      readThrough('gateway_credit_ledger_wait_max_seconds', 'The longest wait of one call for the credit ledger since the process started', () => admissions().ledgerWaitMaxSeconds);
    }
    const rates = this.options.rateAdmissions;
    if (rates) {
      new Gauge({
        name: 'gateway_rate_limit_admissions_total',
        help: 'Admissions of calls of keys with a rate limit, by outcome (admitted, refused with 429 rate_limited) and budget (requests, tokens, concurrent); no key in the labels',
        labelNames: ['outcome', 'limit'],
        registers,
        collect() {
          const counts = rates();
          for (const kind of RATE_KINDS) {
            this.labels('admitted', kind).set(counts.admitted[kind]);
            this.labels('refused', kind).set(counts.refused[kind]);
          }
        },
      });
      readThrough('gateway_rate_limit_round_trips_total', 'Round trips to the rate-limit leases in PostgreSQL (lease grows); keys far from their limits make one per spare chunk', () => rates().grows);
    }
    readThrough('gateway_usage_queue_depth', 'Usage records waiting for their group commit', this.options.usageQueueDepth);
  }

  // Label children per label set, so the hot path skips prom-client's label hashing.
  private readonly children = new Map<string, unknown>();

  /** The label children under `id`, made by `make` the first time. */
  private child<T>(id: string, make: () => T): T {
    let found = this.children.get(id) as T | undefined;
    if (found === undefined) {
      found = make();
      this.children.set(id, found);
    }
    return found;
  }

  /** Any answered request (onResponse); counted when its path is a data-plane one. */
  dataPlaneResponse(url: string, body: unknown, status: number, seconds: number): void {
    const form = formOfPath(url);
    if (form === undefined) return;
    const requested: unknown = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
    const model = typeof requested !== 'string' ? 'none' : (this.options.catalogModel(requested) ?? 'other');
    const children = this.child(`request\u0000${form}\u0000${model}\u0000${status}`, () => ({
      count: this.requests.labels(form, model, String(status)),
      seconds: this.requestSeconds.labels(form, model),
    }));
    children.count.inc();
    children.seconds.observe(seconds);
    if (status === 429) this.creditSuspensions.inc();
  }

  private deployment(provider: string, model: string): DeploymentChildren {
    return this.child(`deployment\u0000${provider}\u0000${model}`, () => ({
      firstEvent: this.upstreamFirstEventSeconds.labels(provider, model),
      ok: this.upstreamSeconds.labels(provider, model, 'ok'),
      error: this.upstreamSeconds.labels(provider, model, 'error'),
      cancelled: this.upstreamSeconds.labels(provider, model, 'cancelled'),
    }));
  }

  /** How one presented API key was resolved (KeyAuthenticator.onLookup). */
  keyLookup(outcome: string): void {
    this.child(`key\u0000${outcome}`, () => this.keyLookups.labels(outcome)).inc();
  }

  /** One usage record handed to the recorder. */
  recorded(input: UsageRecordInput): void {
    this.child(`record\u0000${input.status}`, () => this.usageRecords.labels(input.status)).inc();
    for (const rule in input.guardrailHits) {
      const count = input.guardrailHits[rule]!;
      if (count > 0) this.child(`rule\u0000${rule}`, () => this.guardrailHits.labels(rule)).inc(count);
    }
  }

  /**
   * Wraps a provider adapter to time its upstream calls. The iterator is
   * wrapped by hand rather than with another async generator: one `then` per
   * event instead of a second generator's machinery on the hot path.
   */
  instrument(adapter: ProviderAdapter): ProviderAdapter {
    const count = adapter.countTokens?.bind(adapter);
    return {
      stream: (call: ProviderCall): AsyncIterable<CanonicalEvent> => ({
        [Symbol.asyncIterator]: () => this.timed(adapter.stream(call)[Symbol.asyncIterator](), call),
      }),
      ...(count ? { countTokens: count } : {}),
    };
  }

  private timed(inner: AsyncIterator<CanonicalEvent>, call: ProviderCall): AsyncIterator<CanonicalEvent> {
    const started = performance.now();
    const labels = { provider: call.deployment.provider.name, model: call.deployment.model };
    const children = this.deployment(labels.provider, labels.model);
    let first = true;
    let done = false;
    const end = (outcome: 'ok' | 'error' | 'cancelled'): void => {
      if (done) return;
      done = true;
      children[outcome].observe((performance.now() - started) / 1000);
    };
    return {
      next: () =>
        inner.next().then(
          (result) => {
            if (first) {
              first = false;
              children.firstEvent.observe((performance.now() - started) / 1000);
            }
            // The pipeline stops reading at message_stop; that is the upstream's end.
            if (result.done || result.value.type === 'message_stop') end('ok');
            return result;
          },
          (error: unknown) => {
            if (first && error instanceof UpstreamError && error.retryable) this.fallbacks.inc({ ...labels, failure: error.failure });
            end(error instanceof UpstreamError && error.failure === 'aborted' ? 'cancelled' : 'error');
            throw error;
          },
        ),
      return: async (value?: unknown) => {
        end('cancelled');
        return inner.return ? inner.return(value) : { done: true, value: undefined };
      },
    };
  }
}
