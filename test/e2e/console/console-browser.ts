// Shared pieces of the console browser tests: the console build, one
// Chromium per test file, a fresh browser context per test (its own session
// and storage), page-error capture, screenshots and small page helpers.
// Not a test file itself (mocha only runs *.test.ts).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { ensureConsoleBuild } from '../../../src/console/console-build';
import { startTestApp, type TestAccount, type TestApp } from '../../support/app';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'console');
/** A full secret: `tsxt-` + 40 base62 characters + a 6-character checksum (docs/architecture.md §11). */
export const SECRET_PATTERN = /^tsxt-[0-9A-Za-z]{46}$/;

const LAUNCH_ARGS = [
  '--no-sandbox',
  '--headless',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface ConsoleHarness {
  t: TestApp;
  browser: Browser;
}

/**
 * `before` of a browser suite: skips it (locally) or fails it (CI) without
 * Chromium, builds web/dist if missing or stale (the same function the
 * gateway uses at start-up), starts the app and launches Chromium.
 */
async function startConsoleHarness(context: Mocha.Context): Promise<ConsoleHarness> {
  context.timeout(180_000);
  if (!existsSync(CHROMIUM)) {
    const message = `console browser tests need Chromium at ${CHROMIUM}; install it with \`apt-get install -y chromium\``;
    if (process.env.CI) throw new Error(`${message} (CI is set, so this fails instead of skipping)`);
    console.warn(`  skipped: ${message}`);
    context.skip();
  }
  await ensureConsoleBuild({ logger: pino({ level: 'warn' }) });
  const t = await startTestApp();
  // launch() runs Chromium on a new, empty, temporary user-data-dir of its own.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  await mkdir(ARTIFACTS, { recursive: true });
  return { t, browser };
}

async function stopConsoleHarness(harness: ConsoleHarness | undefined): Promise<void> {
  await harness?.browser.close();
  await harness?.t.close();
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors, failed same-origin requests and CSP reports seen so far. */
  problems: string[];
}

/** A new browser context (own sessionStorage, localStorage, clipboard grant) on the console. */
async function openConsole(harness: ConsoleHarness): Promise<ConsolePage> {
  const context = await harness.browser.newContext({
    baseURL: harness.t.baseUrl,
    locale: 'zh-CN',
    viewport: { width: 1440, height: 900 },
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness.t.baseUrl });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('response', (response) => {
    // The console never asks for a file of its own that is not there.
    if (response.url().includes('/console/') && response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  await page.goto('/console/');
  return { context, page, problems };
}

async function closeConsole(consolePage: ConsolePage | undefined, test: Mocha.Test | undefined): Promise<void> {
  if (!consolePage) return;
  if (test?.state === 'failed') {
    await consolePage.page.screenshot({ path: join(ARTIFACTS, `failed-${slug(test.title)}.png`), fullPage: true }).catch(() => undefined);
  }
  await consolePage.context.close();
}

export interface ConsoleSuite {
  /** The app under test (from the suite's `before` on). */
  t: () => TestApp;
  /** The running test's console page. */
  view: () => ConsolePage;
}

/**
 * Registers a browser suite's hooks; call it inside the `describe`. One app
 * and Chromium for the suite, a fresh console page for each test, and a test
 * that passed still fails if the page logged errors or failed requests.
 */
export function withConsoleBrowser(): ConsoleSuite {
  let harness: ConsoleHarness | undefined;
  let view: ConsolePage | undefined;

  before(async function () {
    harness = await startConsoleHarness(this);
  });
  after(async function () {
    this.timeout(30_000);
    await stopConsoleHarness(harness);
  });
  beforeEach(async function () {
    view = await openConsole(harness!);
  });
  afterEach(async function () {
    const problems = view?.problems ?? [];
    await closeConsole(view, this.currentTest);
    view = undefined;
    if (this.currentTest?.state === 'passed') expect(problems, 'page errors, console errors or failed requests').to.deep.equal([]);
  });

  return { t: () => harness!.t, view: () => view! };
}

export const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Signs in through the form and waits for the key page. */
export async function login(page: Page, account: TestAccount): Promise<void> {
  await page.getByLabel('邮箱').fill(account.email);
  await page.getByLabel('密码').fill(account.password);
  await page.getByRole('button', { name: '登录', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'API 密钥', exact: true }).waitFor();
  await page.locator('table[aria-busy="false"]').first().waitFor();
}

/** The table row of the key with this exact name. */
export function row(page: Page, name: string): Locator {
  return page.locator('tbody tr[data-key-id]').filter({ has: page.locator('.key-name', { hasText: new RegExp(`^${escapeRegExp(name)}$`) }) });
}

export async function cell(rowLocator: Locator, column: string): Promise<string> {
  return ((await rowLocator.locator(`[data-col="${column}"]`).innerText()) ?? '').replace(/\s+/g, ' ').trim();
}

/** Waits until the row's status cell reads `label` (the table reloads after each action). */
export async function waitForStatus(page: Page, name: string, label: string): Promise<void> {
  await row(page, name).locator('[data-col="status"] .badge').first().filter({ hasText: new RegExp(`^${label}$`) }).waitFor();
}

/** Names of the keys the table shows, top to bottom, once it has settled. */
export async function visibleKeyNames(page: Page): Promise<string[]> {
  await page.locator('table[aria-busy="false"]').first().waitFor();
  return page.locator('tbody tr[data-key-id] .key-name').allInnerTexts();
}

/** Row action buttons and whether each is enabled. */
export async function actionStates(rowLocator: Locator): Promise<Record<string, boolean>> {
  const states: Record<string, boolean> = {};
  for (const name of ['编辑', '暂停', '恢复', '注销', '用量']) {
    states[name] = await rowLocator.getByRole('button', { name, exact: true }).isEnabled();
  }
  return states;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
