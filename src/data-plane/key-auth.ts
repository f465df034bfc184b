import type { IncomingHttpHeaders } from 'node:http';
import { CHANNELS, type ChangeFeed } from '../db/change-feed';
import { bearerToken } from '../http/bearer';
import type { AccountView } from '../domain/accounts/account.service';
import type { KeyGrant, KeyGrants } from '../domain/keys/api-key.repository';
import { hashSecret, hasSecretShape, hasValidChecksum } from '../domain/keys/key-secret';
import { effectiveStatus, type StoredStatus } from '../domain/keys/key-status';
import { zoneDate } from '../domain/zone-time';
import { type AppError, appError } from '../errors';
import { rateLimitOf, type RateLimit } from '../core/rate-limit';
import type { CreditMonitor } from '../metering/credit-monitor';

/** Shared by every call made with the key while it is cached: never mutated. */
export interface AuthenticatedKey {
  readonly keyId: string;
  readonly keyName: string;
  readonly modelScope: ReadonlySet<string>;
  readonly account: AccountView;
  /** The key's rate limit (docs/architecture.md §18); null = none. A change reaches every process through the change feed like any key change. */
  readonly rateLimit: RateLimit | null;
  /**
   * Registers a call made with this key: `cut` is called with the refusal a
   * new call would get once the key stops being usable (suspended,
   * cancelled, expired, or its account over the credit limit), so a running
   * stream ends with it. Returns the unregistration.
   */
  readonly watch?: (cut: (refusal: AppError) => void) => () => void;
}

/** What is cached per key: the identity handed to every call, and what its status is derived from. */
interface CachedKey {
  key: AuthenticatedKey;
  stored: StoredStatus;
  expiresAt: string | null;
  /** When a rotated-away key's grace ends (ms since the epoch), or null. */
  cancelsAt: number | null;
}

const notAKey = (): AppError => appError('unknownApiKey');

export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const bearer = bearerToken(headers.authorization);
  if (bearer) return bearer;
  const header = headers['x-api-key'];
  return typeof header === 'string' && header.length > 0 ? header.trim() : undefined;
}

/** How a presented key was resolved: from the cache, by a database lookup (found or not), or by the negative cache. */
export type KeyLookupOutcome = 'cached' | 'found' | 'not_found' | 'not_found_cached' | 'refused_busy';

/** How long a secret that is not a key is remembered as such: a flood of the same fake keys costs one lookup each per this long. */
const UNKNOWN_TTL_MS = 60_000;
/** Unknown secrets remembered at most (oldest dropped first), so a flood of distinct fakes cannot grow memory. */
const UNKNOWN_MAX = 100_000;
/**
 * Database lookups of uncached keys in flight at once, and how many may wait:
 * a flood of distinct made-up keys waits its turn on a few connections instead
 * of taking the pool that metering and the cached keys' calls need. Past the
 * queue, 503 with retry-after.
 */
const MAX_LOOKUPS = 4;
const MAX_WAITING_LOOKUPS = 1024;

/**
 * Data-plane key authentication (docs/architecture.md §11). Keys are looked up by the
 * SHA-256 of the secret and cached per process; the control plane NOTIFYs
 * after every committed change and this cache drops the entry, so suspend,
 * resume, cancel, scope and expiry changes apply to the very next request on
 * every process. While the change feed is disconnected nothing is cached.
 */
export class KeyAuthenticator {
  private readonly byHash = new Map<string, CachedKey>();
  private readonly hashById = new Map<string, string>();
  /** Secrets (by hash) the database did not know, until when (ms). */
  private readonly unknown = new Map<string, number>();
  private lookups = 0;
  private readonly waiting: Array<() => void> = [];
  /** Cut functions of the calls in flight, by key id; and the key ids in flight, by account. */
  private readonly running = new Map<string, Set<(refusal: AppError) => void>>();
  private readonly runningByAccount = new Map<string, Set<string>>();
  /** Sees how each presented key was resolved (metrics); must not throw. */
  onLookup: (outcome: KeyLookupOutcome) => void = () => {};

  constructor(
    /** The key lookups (api-key.repository.ts): one query each, no ORM. */
    private readonly grants: KeyGrants,
    private readonly changes: ChangeFeed,
    private readonly credit: CreditMonitor,
  ) {
    changes.on(CHANNELS.keys, (keyId) => {
      this.forgetKey(keyId);
      if (this.running.has(keyId)) void this.recheck(keyId);
    });
    changes.on(CHANNELS.accounts, (accountId) => {
      this.forgetAccount(accountId);
      for (const keyId of this.runningByAccount.get(accountId) ?? []) void this.recheck(keyId);
    });
    changes.onReset(() => this.clear());
  }

  private forgetKey(keyId: string): void {
    const hash = this.hashById.get(keyId);
    if (hash) this.byHash.delete(hash);
    this.hashById.delete(keyId);
  }

  private forgetAccount(accountId: string): void {
    for (const [hash, entry] of this.byHash) {
      if (entry.key.account.id === accountId) {
        this.byHash.delete(hash);
        this.hashById.delete(entry.key.keyId);
      }
    }
  }

  clear(): void {
    this.byHash.clear();
    this.hashById.clear();
    this.unknown.clear();
  }

  async authenticate(headers: IncomingHttpHeaders): Promise<AuthenticatedKey> {
    const secret = presentedKey(headers);
    if (!secret) throw appError('missingApiKey');
    // Anything not shaped like a key is refused before it is hashed.
    if (!hasSecretShape(secret)) throw appError('malformedApiKey');
    const hash = hashSecret(secret);
    let entry = this.byHash.get(hash);
    // A cached key passed its checksum when it was first looked up: one SHA-256 per call, not two.
    if (entry) this.onLookup('cached');
    else {
      // Refused by checksum: a typo never costs a database round trip.
      if (!hasValidChecksum(secret)) throw appError('malformedApiKey');
      const until = this.unknown.get(hash);
      if (until !== undefined && until > Date.now()) {
        this.onLookup('not_found_cached');
        throw notAKey();
      }
      entry = await this.lookUp(hash);
    }
    if (!entry) throw notAKey();

    const { key } = entry;
    const refusal = refusalOf(entry, await this.credit.isOverLimit(key.account));
    if (refusal) throw refusal;
    return key;
  }

  /** Registers a call in flight with a key (through AuthenticatedKey.watch). */
  watch(key: { keyId: string; accountId: string }, cut: (refusal: AppError) => void): () => void {
    const cuts = this.running.get(key.keyId) ?? new Set<(refusal: AppError) => void>();
    cuts.add(cut);
    this.running.set(key.keyId, cuts);
    const keys = this.runningByAccount.get(key.accountId) ?? new Set<string>();
    keys.add(key.keyId);
    this.runningByAccount.set(key.accountId, keys);
    return () => {
      cuts.delete(cut);
      if (cuts.size > 0) return;
      this.running.delete(key.keyId);
      keys.delete(key.keyId);
      if (keys.size === 0) this.runningByAccount.delete(key.accountId);
    };
  }

  /**
   * A key with calls in flight changed (or its account did): if it is no
   * longer usable, those calls are cut with the refusal a new call would get.
   * An account that has only come to its limit lets them finish: each holds
   * a reservation within the limit. One whose settled usage has reached the
   * limit itself (the operator lowered it) cuts them.
   */
  private async recheck(keyId: string): Promise<void> {
    try {
      const grant = await this.grants.grantById(keyId);
      const refusal = grant
        ? refusalOf(entryOf(grant, this), (await this.credit.state(grant.account)) === 'over_limit')
        : appError('keyCancelled');
      if (!refusal) return;
      for (const cut of [...(this.running.get(keyId) ?? [])]) cut(refusal);
    } catch {
      // The database is away: the next notification, or the call's own end, settles it.
    }
  }

  /** A database lookup, a few at a time (MAX_LOOKUPS); unknown secrets are remembered for UNKNOWN_TTL_MS. */
  private async lookUp(hash: string): Promise<CachedKey | undefined> {
    if (this.lookups >= MAX_LOOKUPS) {
      if (this.waiting.length >= MAX_WAITING_LOOKUPS) {
        this.onLookup('refused_busy');
        throw appError('keyChecksBusy');
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.lookups += 1;
    try {
      const entry = await this.load(hash);
      if (entry) this.onLookup('found');
      else {
        this.onLookup('not_found');
        this.unknown.delete(hash);
        this.unknown.set(hash, Date.now() + UNKNOWN_TTL_MS);
        if (this.unknown.size > UNKNOWN_MAX) {
          const oldest = this.unknown.keys().next().value;
          if (oldest !== undefined) this.unknown.delete(oldest);
        }
      }
      return entry;
    } finally {
      this.lookups -= 1;
      this.waiting.shift()?.();
    }
  }

  private async load(hash: string): Promise<CachedKey | undefined> {
    const feedUp = this.changes.connected;
    const grant = await this.grants.grantBySecretHash(hash);
    if (!grant) return undefined;
    const entry = entryOf(grant, this);
    // Only cache what an invalidation could reach: the feed must have been up
    // before the read, or a change committed in between would go unnoticed.
    if (feedUp && this.changes.connected) {
      this.byHash.set(hash, entry);
      this.hashById.set(entry.key.keyId, hash);
    }
    return entry;
  }
}

function entryOf(grant: KeyGrant, authenticator: { watch(key: { keyId: string; accountId: string }, cut: (refusal: AppError) => void): () => void }): CachedKey {
  const ids = { keyId: grant.id, accountId: grant.account.id };
  return {
    key: {
      keyId: grant.id,
      keyName: grant.name,
      modelScope: new Set(grant.modelScope),
      account: grant.account,
      rateLimit: rateLimitOf(grant.rateLimit),
      watch: (cut) => authenticator.watch(ids, cut),
    },
    stored: grant.status,
    expiresAt: grant.expiresAt,
    cancelsAt: grant.cancelsAt === null ? null : grant.cancelsAt.getTime(),
  };
}

/** The refusal a call with this key gets now, or undefined when the key is usable. */
function refusalOf(entry: CachedKey, overCreditLimit: boolean): AppError | undefined {
  const { status, suspendedReason } = effectiveStatus({
    stored: entry.stored,
    expiresAt: entry.expiresAt,
    today: zoneDate(entry.key.account.timezone),
    overCreditLimit,
    // Refused from the instant the grace ends, cached or not, before any sweep has run.
    graceEnded: entry.cancelsAt !== null && entry.cancelsAt <= Date.now(),
  });
  switch (status) {
    case 'active':
      return undefined;
    case 'cancelled':
      return appError('keyCancelled');
    case 'expired':
      return appError('keyExpired');
    case 'suspended':
      return appError(suspendedReason === 'credit_limit' ? 'accountOverCreditLimit' : 'keySuspended');
  }
}
