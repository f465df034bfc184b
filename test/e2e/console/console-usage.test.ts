// The 用量 view in real Chromium: after real data-plane calls with a key, the
// console's six tiers, chart, totals and the table's usage column agree with
// the REST control plane (`GET /api/v1/keys/{id}/usage`).
import { expect } from 'chai';
import { PRICE_TIERS } from '../../../src/core/catalog.types';
import { api, createAccount, createKey, type TestAccount } from '../../support/app';
import { operator } from '../../integration/billing/billing-support';
import {
  cell,
  login,
  row,
  screenshot,
  withConsoleBrowser,
} from './console-browser';

describe('console: key usage view (browser)', function () {
  this.timeout(60_000);
  const { t, view } = withConsoleBrowser();
  const numbers = new Intl.NumberFormat('zh-CN', { maximumFractionDigits: 0 });

  async function callWith(secret: string, text: string): Promise<void> {
    const response = await fetch(`${t().baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'tsxt-general', max_tokens: 200, messages: [{ role: 'user', content: text }] }),
    });
    expect(response.status, await response.clone().text()).to.equal(200);
    await response.json();
  }

  /** This month to today in the account zone (UTC here): the view's default range. */
  function monthToDate(): { start: string; end: string } {
    const end = new Date().toISOString().slice(0, 10);
    return { start: `${end.slice(0, 8)}01`, end };
  }

  async function restUsage(owner: TestAccount, id: string, range: { start: string; end: string }): Promise<any> {
    const usage = await api(t(), 'GET', `/api/v1/keys/${id}/usage?start=${range.start}&end=${range.end}`, owner.token);
    expect(usage.status, JSON.stringify(usage.body)).to.equal(200);
    return usage.body;
  }

  /** A key with two data-plane calls (the second repeats the prompt, so the mock reports a cache hit). */
  async function keyWithUsage(owner: TestAccount, name: string): Promise<{ id: string; usage: any }> {
    const key = await createKey(t(), owner.token, { name });
    const prompt = 'Summarise the quarterly report for the finance team in three short bullet points, please.';
    await callWith(key.api_key, prompt);
    await callWith(key.api_key, prompt);
    const usage = await restUsage(owner, key.api_key_id, monthToDate());
    expect(usage.calls).to.equal(2);
    expect(usage.total_tokens).to.be.greaterThan(0);
    return { id: key.api_key_id, usage };
  }

  it('shows the six tiers and the same totals as REST, as a chart and a table', async () => {
    const { page } = view();
    const owner = await createAccount(t(), { creditLimitMicros: 50_000_000 });
    const { id, usage } = await keyWithUsage(owner, 'report-writer');
    const listed = (await api(t(), 'GET', '/api/v1/keys', owner.token)).body.items.find((k: any) => k.api_key_id === id);
    const credit = (await api(t(), 'GET', '/api/v1/account/credit', owner.token)).body;

    await login(page, owner);
    const r = row(page, 'report-writer');
    // 用量: lifetime tokens, and a bar of this month's amount against the credit limit.
    expect(await cell(r, 'usage')).to.equal(numbers.format(listed.used_tokens));
    expect(await cell(r, 'lastUsedAt')).to.equal(listed.last_used_at);
    const meter = r.getByRole('meter');
    expect(await meter.getAttribute('aria-label')).to.equal(`本月 ${usage.total_amount} / 额度 ${credit.credit_limit} ${credit.currency}`);
    // The account's credit: settled, reserved (calls in flight and the process's slice of headroom), remaining.
    const summary = await page.getByTestId('credit-summary').innerText();
    const figures = /^本月额度 ([\d.]+) CNY：已用 ([\d.]+)，预留 ([\d.]+)，剩余 ([\d.]+)$/.exec(summary);
    expect(figures, summary).to.not.equal(null);
    const [, limit, used, reserved, remaining] = figures!.map(Number) as number[];
    expect([limit, used]).to.deep.equal([Number(credit.credit_limit), Number(credit.month_used)]);
    expect(remaining).to.be.closeTo(limit! - used! - reserved!, 1e-6);

    await r.getByRole('button', { name: '用量', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: '用量：report-writer' });
    await dialog.locator('tbody tr[data-tier]').first().waitFor();
    expect(await dialog.getByLabel('开始日期').inputValue()).to.equal(monthToDate().start);
    expect(await dialog.getByLabel('结束日期').inputValue()).to.equal(monthToDate().end);

    expect(await dialog.locator('tbody tr[data-tier]').evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-tier')))).to.deep.equal(PRICE_TIERS);
    for (const line of usage.tiers) {
      const tr = dialog.locator(`tbody tr[data-tier="${line.tier}"]`);
      expect(await tr.locator('[data-cell="tokens"]').innerText(), line.tier).to.equal(numbers.format(line.tokens));
      expect(await tr.locator('[data-cell="unit-price"]').innerText(), line.tier).to.equal(line.unit_price);
      expect(await tr.locator('[data-cell="amount"]').innerText(), line.tier).to.equal(line.amount);
    }
    expect(await dialog.locator('[data-cell="total-tokens"]').innerText()).to.equal(numbers.format(usage.total_tokens));
    expect(await dialog.locator('[data-cell="total-amount"]').innerText()).to.equal(`${usage.total_amount} ${usage.currency}`);
    expect(await dialog.getByTestId('usage-calls').innerText()).to.equal('2');

    // The chart: one bar group per tier, its value label the same number.
    const chart = dialog.getByRole('img', { name: '六个计价档位的 token 用量' });
    expect(await chart.locator('g[data-tier]').count()).to.equal(6);
    for (const line of usage.tiers) {
      expect(await chart.locator(`g[data-tier="${line.tier}"] .tier-chart-value`).textContent()).to.equal(numbers.format(line.tokens));
    }
    await screenshot(page, 'usage-view');

    // Another range: before the key existed there is nothing.
    await dialog.getByLabel('开始日期').fill('2020-01-01');
    await dialog.getByLabel('结束日期').fill('2020-01-31');
    await dialog.getByRole('button', { name: '查询' }).click();
    await dialog.getByText('2020-01-01 至 2020-01-31').waitFor();
    expect(await dialog.locator('[data-cell="total-tokens"]').innerText()).to.equal('0');
    expect(await dialog.getByTestId('usage-calls').innerText()).to.equal('0');
    const past = await restUsage(owner, id, { start: '2020-01-01', end: '2020-01-31' });
    expect(await dialog.locator('[data-cell="total-amount"]').innerText()).to.equal(`${past.total_amount} ${past.currency}`);

    await dialog.getByRole('button', { name: '关闭' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('marks keys suspended by the account credit limit', async () => {
    const { page } = view();
    // A call, then the operator lowers the limit below what it cost: the account is over it.
    const owner = await createAccount(t(), { creditLimitMicros: 50_000_000 });
    const key = await createKey(t(), owner.token, { name: 'over-limit' });
    await callWith(key.api_key, 'Hello there, how are you today?');
    await t().app.services.accounts.setCreditLimit(operator(owner.accountId), 1);
    const listed = (await api(t(), 'GET', '/api/v1/keys', owner.token)).body.items[0];
    expect(listed).to.include({ status: 'suspended', suspended_reason: 'credit_limit' });

    await login(page, owner);
    const r = row(page, 'over-limit');
    expect(await r.locator('[data-col="status"] .badge').allInnerTexts()).to.deep.equal(['已暂停', '额度暂停']);
    expect(await r.getByRole('button', { name: '恢复', exact: true }).isDisabled()).to.equal(true);
    expect(await r.getByRole('button', { name: '暂停', exact: true }).isEnabled()).to.equal(true);
    expect(await r.getByRole('meter').getAttribute('aria-valuenow')).to.equal('100');
    await screenshot(page, 'credit-limit');
  });
});
