// The 访问管理 / API 密钥 page in real Chromium: a banner once the month's
// settled usage reaches one of the account's credit-alert thresholds (zh and
// en), none below them.
import { expect } from 'chai';
import { zoneMonth } from '../../../src/domain/zone-time';
import { api, createAccount, createKey, type TestAccount } from '../../support/app';
import { testDatabase } from '../../support/db';
import { login, screenshot, withConsoleBrowser } from './console-browser';

describe('console: credit-alert banner (browser)', function () {
  this.timeout(60_000);
  const { t, view } = withConsoleBrowser();

  /** An account with a 1 CNY limit of which `usedMicros` is settled this month, and one key. */
  async function accountAt(usedMicros: number): Promise<TestAccount> {
    const owner = await createAccount(t(), { timezone: 'UTC', creditLimitMicros: 1_000_000 });
    await (await testDatabase()).pool.query('insert into account_month_usage (account_id, month, amount_micros) values ($1, $2, $3)', [owner.accountId, zoneMonth('UTC'), usedMicros]);
    await createKey(t(), owner.token, { name: 'alerted-key' });
    return owner;
  }

  it('shows the highest threshold reached, in Chinese and in English', async () => {
    const { page } = view();
    const owner = await accountAt(850_000);
    expect((await api(t(), 'GET', '/api/v1/account/credit-alerts', owner.token)).body.reached_threshold).to.equal(80);
    await login(page, owner);
    const banner = page.getByTestId('credit-alert-banner');
    await banner.waitFor();
    expect(await banner.innerText()).to.equal('提醒：本月用量已达额度的 80%（已用 0.85 / 额度 1 CNY）。');
    await screenshot(page, 'credit-alert-banner-zh');
    await page.getByRole('button', { name: 'Switch to English' }).click();
    expect(await banner.innerText()).to.equal("Heads-up: this month's usage has reached 80% of the credit limit (0.85 of 1 CNY).");
  });

  it('follows the account’s own thresholds, and shows nothing below them', async () => {
    const { page } = view();
    const owner = await accountAt(600_000);
    expect((await api(t(), 'PUT', '/api/v1/account/credit-alerts', owner.token, { thresholds: [50, 90] })).status).to.equal(200);
    await login(page, owner);
    const banner = page.getByTestId('credit-alert-banner');
    await banner.waitFor();
    expect(await banner.innerText()).to.contain('50%');
    expect((await api(t(), 'PUT', '/api/v1/account/credit-alerts', owner.token, { thresholds: [70, 90] })).status).to.equal(200);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'API 密钥', exact: true }).waitFor();
    await page.locator('table[aria-busy="false"]').first().waitFor();
    expect(await banner.count()).to.equal(0);
  });
});
