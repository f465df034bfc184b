// Boots the real app (Fastify + real PostgreSQL) on a random port, with small
// factories so each test makes its own account, users and keys.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createApp, type App } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import { loggerOptions } from '../../src/logger';
import { builtinCatalog, parseCatalog } from '../../src/routing/catalog';
import type { Catalog } from '../../src/core/catalog.types';
import type { Database } from '../../src/db/database';
import { testDatabase } from './db';
import { lineSink } from './log-sink';

export interface TestApp {
  app: App;
  baseUrl: string;
  config: Config;
  /** Every log line the app wrote, for "no secret in the logs" assertions. */
  logs: string[];
  close(): Promise<void>;
}

export interface TestAppOptions {
  catalog?: Catalog | unknown;
  env?: Record<string, string>;
  /** A database of the test's own (e.g. one it stops and starts); default: the run's shared one. */
  database?: Database;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await testDatabase());
  const config = loadConfig({ LOG_LEVEL: 'info', PORT: '0', ...options.env });
  const logs: string[] = [];
  const logger = pino(loggerOptions('debug'), lineSink(logs));
  const env = { ...options.env };
  const catalog =
    options.catalog === undefined
      ? builtinCatalog(env)
      : (options.catalog as Catalog).modelsByName instanceof Map
        ? (options.catalog as Catalog)
        : parseCatalog(options.catalog, env, 'test-catalog.json');
  // Each app shares the run's database but must not touch the pool on close.
  const shared = { ...database, close: async () => undefined };
  const app = await createApp({ config, database: shared, logger, catalog });
  await app.server.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, baseUrl: `http://127.0.0.1:${port}`, config, logs, close: () => app.close() };
}

export interface TestAccount {
  accountId: string;
  token: string;
  email: string;
  password: string;
}

const unique = () => randomBytes(5).toString('hex');

/** A fresh account with a console user of the given role, logged in. */
export async function createAccount(
  t: TestApp,
  options: { role?: 'owner' | 'admin' | 'viewer'; timezone?: string; creditLimitMicros?: number | null } = {},
): Promise<TestAccount> {
  const { accounts } = t.app.services;
  const account = await accounts.create({
    name: `acct-${unique()}`,
    ...(options.timezone ? { timezone: options.timezone } : {}),
    creditLimitMicros: options.creditLimitMicros ?? null,
  });
  return addUser(t, account.id, options.role ?? 'owner');
}

export async function addUser(t: TestApp, accountId: string, role: 'owner' | 'admin' | 'viewer'): Promise<TestAccount> {
  const email = `${role}-${unique()}@example.com`;
  const password = `pw-${unique()}-secret`;
  await t.app.services.sessions.createUser({ accountId, email, password, role });
  const grant = await t.app.services.sessions.login(email, password, '127.0.0.1');
  return { accountId, token: grant.token, email, password };
}

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch + JSON, with the session token as bearer. */
export async function api<T = any>(t: TestApp, method: string, path: string, token?: string, body?: unknown): Promise<JsonResponse<T>> {
  const response = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON (CSV, empty)
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Creates a key through REST and returns the 201 body (with the secret). */
export async function createKey(t: TestApp, token: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const response = await api(t, 'POST', '/api/v1/keys', token, {
    name: `key-${unique()}`,
    dimension: '部门',
    model_scope: ['tsxt-general'],
    ...overrides,
  });
  if (response.status !== 201) throw new Error(`createKey: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** A running app and one key of a fresh account, scoped to `modelScope`: what a suite of data-plane calls starts from. */
export async function startKeyedApp(modelScope: string[]): Promise<{ t: TestApp; key: string }> {
  const t = await startTestApp();
  const owner = await createAccount(t);
  return { t, key: (await createKey(t, owner.token, { model_scope: modelScope })).api_key as string };
}
