// Operator CLI (docs/architecture.md §16.5): `npm run admin -- <command>`, JSON on stdout.
// Uses the same DATABASE_URL as the server (embedded PostgreSQL when unset);
// changes reach running gateways at once through NOTIFY.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { guardrailRule } from '../control-plane/rest/guardrail.handlers';
import { createdKey, keySummary } from '../control-plane/rest/key.mapper';
import { openDatabase } from '../db/database';
import { AccountService, parseCreditLimit, parseCreditOverflow } from '../domain/accounts/account.service';
import { PgAccountRepository } from '../domain/accounts/account.repository';
import { PgTransactor } from '../domain/pg-transactor';
import { rateLimitOf } from '../control-plane/rest/account.mapper';
import type { Actor } from '../domain/actor';
import { AuditService } from '../domain/audit/audit.service';
import { PgAuditRepository } from '../domain/audit/audit.repository';
import { GuardrailPolicyService } from '../domain/guardrails/guardrail-policy.service';
import { PgGuardrailPolicyRepository } from '../domain/guardrails/account-guardrail-policy.repository';
import { ApiKeyService } from '../domain/keys/api-key.service';
import { PgApiKeyRepository } from '../domain/keys/api-key.repository';
import { parseRateLimit } from '../core/rate-limit';
import { KeyRotationService } from '../domain/keys/key-rotation.service';
import { SessionService } from '../domain/auth/session.service';
import { PgConsoleSessionRepository } from '../domain/auth/console-session.repository';
import { PgConsoleUserRepository } from '../domain/auth/console-user.repository';
import { AppError } from '../errors';
import { formatMicros } from '../core/decimal';
import { CreditMonitor } from '../metering/credit-monitor';
import { UsageQueryService } from '../metering/usage-query.service';
import { loadCatalog } from '../routing/catalog';
import { entities } from '../entities';

const USAGE = `usage: npm run admin -- <command>
  account create --name N [--timezone Z] [--credit-limit D]
  account list
  user create --account ID --email E (--password-stdin | --password P) --role owner|admin|viewer
      --password-stdin reads the password from standard input (first line); --password
      puts it in the process list and the shell history
  credit-limit set --account ID [--amount D|none] [--overflow refuse|lower_max_tokens]
  guardrail set --account ID --rule R --policy block|redact|flag|off
  guardrail reset --account ID --rule R
  settlement close --account ID --month YYYY-MM
  key rotate --account ID --key KEY_ID [--grace-hours H]
      a successor key with the same name, dimension, scope and expiry; its secret is printed
      once (api_key). The old key works for H hours (default 24), then is cancelled;
      --grace-hours 0 suspends it at once (emergency)
  key rate-limit --account ID --key KEY_ID --rate-limit JSON|none
      one key's limit, JSON as the REST body's rate_limit
      ({"requests_per_minute":60,"tokens_per_minute":null,"concurrent_requests":4}); none lifts it
  key-defaults set --account ID --rate-limit JSON|none
      the rate limit new keys of the account get`;

class UsageError extends Error {}

/** `--rate-limit`: JSON as the REST body's rate_limit, or `none` (no limit). */
function rateLimitOption(values: Record<string, string | boolean | undefined>): unknown {
  const text = required(values, 'rate-limit');
  if (text === 'none') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError('--rate-limit must be JSON such as {"requests_per_minute":60,"tokens_per_minute":null,"concurrent_requests":4}, or none');
  }
}

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** The new user's password: from standard input with --password-stdin (kept out of `ps` and shell history), else --password. */
async function passwordOf(values: { password?: string; 'password-stdin'?: boolean }): Promise<string> {
  if (values['password-stdin'] && values.password !== undefined) throw new UsageError('give --password-stdin or --password, not both');
  if (!values['password-stdin']) return required(values, 'password');
  let input = '';
  for await (const chunk of process.stdin) input += String(chunk);
  const password = input.split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UsageError('--password-stdin read no password from standard input');
  return password;
}

const operator = (accountId: string): Actor => ({ accountId, userId: null, label: 'operator-cli', role: 'owner', ip: null });

async function run(argv: string[]): Promise<unknown> {
  const [noun, verb, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      timezone: { type: 'string' },
      'credit-limit': { type: 'string' },
      account: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      role: { type: 'string' },
      amount: { type: 'string' },
      month: { type: 'string' },
      rule: { type: 'string' },
      policy: { type: 'string' },
      overflow: { type: 'string' },
      key: { type: 'string' },
      'grace-hours': { type: 'string' },
      'rate-limit': { type: 'string' },
    },
    strict: true,
  });
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  const known = ['account create', 'account list', 'user create', 'credit-limit set', 'guardrail set', 'guardrail reset', 'settlement close', 'key rotate', 'key rate-limit', 'key-defaults set'];
  if (!known.includes(command)) throw new UsageError(command ? `unknown command "${command}"` : 'no command given');

  const config = loadConfig();
  const catalog = await loadCatalog(config.catalogPath, config.upstreamEnv);
  const database = await openDatabase(config, { entities });
  try {
    const transactor = new PgTransactor(database.orm);
    const audit = new AuditService(new PgAuditRepository(database.orm));
    const accountRows = new PgAccountRepository(database.orm);
    const accounts = new AccountService(transactor, accountRows, audit, { timezone: config.timezone, currency: catalog.currency });
    const sessions = new SessionService(transactor, new PgConsoleUserRepository(database.orm), new PgConsoleSessionRepository(database.orm), config.sessionTtlHours * 3600_000);
    const view = (a: Awaited<ReturnType<AccountService['get']>>) => ({
      account_id: a.id,
      name: a.name,
      timezone: a.timezone,
      currency: a.currency,
      credit_limit: a.creditLimitMicros === null ? null : formatMicros(a.creditLimitMicros),
      credit_overflow: a.creditOverflow,
      created_at: a.createdAt.toISOString(),
    });
    switch (command) {
      case 'account create': {
        const limit = values['credit-limit'];
        const account = await accounts.create({
          name: required(values, 'name'),
          ...(values.timezone ? { timezone: values.timezone } : {}),
          creditLimitMicros: limit === undefined ? null : parseCreditLimit(limit, 'credit-limit'),
        });
        return view(account);
      }
      case 'account list':
        return (await accounts.list()).map(view);
      case 'user create': {
        const account = await accounts.get(required(values, 'account'));
        const user = await sessions.createUser({
          accountId: account.id,
          email: required(values, 'email'),
          password: await passwordOf(values),
          role: required(values, 'role'),
        });
        return { user_id: user.id, account_id: user.accountId, email: user.email, role: user.role };
      }
      case 'credit-limit set': {
        const accountId = required(values, 'account');
        if (values.amount === undefined && values.overflow === undefined) throw new UsageError('credit-limit set needs --amount, --overflow or both');
        const account = await accounts.setCreditLimit(
          operator(accountId),
          values.amount === undefined ? undefined : parseCreditLimit(values.amount, 'amount'),
          values.overflow === undefined ? undefined : parseCreditOverflow(values.overflow, 'overflow'),
        );
        return view(account);
      }
      case 'key-defaults set': {
        // The rate limit new keys of the account get.
        const defaults = await accounts.setKeyDefaults(operator(required(values, 'account')), { rateLimit: rateLimitOf(rateLimitOption(values)) });
        return { rate_limit: defaults.rateLimit };
      }
      case 'key rate-limit': {
        // One key's limit, through the same update (and checks, audit and change notice) as REST and GraphQL.
        const account = await accounts.get(required(values, 'account'));
        const models = { has: (name: string) => catalog.modelsByName.has(name), names: () => catalog.models.map((m) => m.name) };
        const keys = new ApiKeyService(new PgApiKeyRepository(database.orm, database.pool), transactor, accounts, audit, models, new CreditMonitor(database.pool, catalog.minimalCallMicros));
        return keySummary(await keys.update(operator(account.id), required(values, 'key'), { rateLimit: parseRateLimit(rateLimitOption(values)) }));
      }
      case 'guardrail set':
      case 'guardrail reset': {
        const account = await accounts.get(required(values, 'account'));
        const guardrails = new GuardrailPolicyService(transactor, new PgGuardrailPolicyRepository(database.orm), accountRows, audit, { catalogPolicies: catalog.guardrails.policies });
        const rule =
          command === 'guardrail set'
            ? await guardrails.set(operator(account.id), { rule: required(values, 'rule'), policy: required(values, 'policy') })
            : await guardrails.reset(operator(account.id), required(values, 'rule'));
        return { account_id: account.id, ...guardrailRule(rule) };
      }
      case 'key rotate': {
        const account = await accounts.get(required(values, 'account'));
        const models = { has: (name: string) => catalog.modelsByName.has(name), names: () => catalog.models.map((m) => m.name) };
        const keyRows = new PgApiKeyRepository(database.orm, database.pool);
        const keys = new ApiKeyService(keyRows, transactor, accounts, audit, models, new CreditMonitor(database.pool, catalog.minimalCallMicros));
        const grace = values['grace-hours'];
        // A non-number reaches the service as NaN, which it refuses naming grace_hours.
        const input = grace === undefined ? {} : { graceHours: grace.trim() === '' ? Number.NaN : Number(grace) };
        return createdKey(await new KeyRotationService(keyRows, transactor, keys, audit).rotate(operator(account.id), required(values, 'key'), input));
      }
      default: {
        const usage = new UsageQueryService(database.pool, accounts, catalog, new CreditMonitor(database.pool, catalog.minimalCallMicros));
        // Awaited here, inside the try: the finally below closes the database.
        return await usage.closeSettlement(required(values, 'account'), required(values, 'month'));
      }
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2))
  .then((result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exit(0);
  })
  .catch((error: unknown) => {
    if (error instanceof UsageError || (error instanceof Error && error.name === 'TypeError' && /option/i.test(error.message))) {
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      process.exit(2);
    }
    const body = error instanceof AppError ? { error: { code: error.code, message: error.message, field: error.field } } : { error: { code: 'failed', message: (error as Error).message } };
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exit(1);
  });
