// The console page 访问管理 / API 密钥 in real Chromium against the real app:
// login, the key table, the create dialog's one-time secret, row actions,
// filters, sorting, paging, errors, the viewer role and the English switch.
import { expect } from 'chai';
import { api, addUser, createAccount, createKey, type TestAccount } from '../../support/app';
import { testDatabase } from '../../support/db';
import {
  actionStates,
  cell,
  login,
  row,
  screenshot,
  SECRET_PATTERN,
  visibleKeyNames,
  waitForStatus,
  withConsoleBrowser,
} from './console-browser';

describe('console: 访问管理 / API 密钥 (browser)', function () {
  this.timeout(60_000);
  const { t, view } = withConsoleBrowser();
  const restKey = async (account: TestAccount, id: string) => (await api(t(), 'GET', `/api/v1/keys/${id}`, account.token)).body;

  it('signs in through the form, keeps the session on reload and signs out', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await screenshot(page, 'login');
    await page.getByLabel('邮箱').fill(owner.email);
    await page.getByLabel('密码').fill('wrong-password');
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: '邮箱或密码不正确' }).waitFor();
    expect(await page.getByRole('alert').innerText()).to.contain('invalid_credentials');

    await login(page, owner);
    expect(await page.getByRole('navigation', { name: '当前位置' }).innerText()).to.match(/访问管理\s*\/?\s*API 密钥/);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).to.have.length(1);

    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'API 密钥' }).waitFor();

    const browserToken = await page.evaluate(() => sessionStorage.getItem(sessionStorage.key(0) ?? ''));
    expect((await api(t(), 'GET', '/api/v1/keys', browserToken ?? undefined)).status).to.equal(200);
    await page.getByRole('button', { name: '退出登录' }).click();
    await page.getByLabel('邮箱').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
    // Signing out revoked the session on the server too.
    expect((await api(t(), 'GET', '/api/v1/keys', browserToken ?? undefined)).status).to.equal(401);
  });

  it('returns to the login form when the session ends on the server', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await createKey(t(), owner.token, { name: 'still-here' });
    await login(page, owner);
    const browserToken = await page.evaluate(() => sessionStorage.getItem(sessionStorage.key(0) ?? ''));
    expect((await api(t(), 'DELETE', '/api/v1/sessions/current', browserToken ?? undefined)).status).to.be.oneOf([200, 204]);
    await page.getByLabel('状态', { exact: true }).selectOption({ label: '正常' });
    await page.getByRole('status').filter({ hasText: '登录已失效，请重新登录' }).waitFor();
    expect(await page.getByLabel('邮箱').isVisible()).to.equal(true);
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
  });

  it('works from the keyboard: dialogs take the focus, Esc closes them and gives it back', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await page.getByLabel('邮箱').focus();
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(owner.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'API 密钥' }).waitFor();

    const create = page.getByRole('button', { name: '创建密钥' });
    await create.focus();
    await page.keyboard.press('Enter');
    const form = page.getByRole('dialog', { name: '创建密钥' });
    await form.waitFor();
    expect(await form.getByLabel('名称').evaluate((input) => input === document.activeElement)).to.equal(true);
    await page.keyboard.type('typed-key');
    await page.keyboard.press('Tab'); // 部门/业务线
    await page.keyboard.press('Tab'); // the first model
    await page.keyboard.press('Space');
    expect(await form.getByRole('checkbox', { name: /tsxt-general/ }).isChecked()).to.equal(true);
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
    expect(await create.evaluate((button) => button === document.activeElement)).to.equal(true);
    expect((await api(t(), 'GET', '/api/v1/keys', owner.token)).body.total).to.equal(0);
  });

  it('lists keys created through REST with their column values and status labels', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const active = await createKey(t(), owner.token, { name: 'team-search', dimension: '部门', expires_at: '2099-12-31' });
    const suspended = await createKey(t(), owner.token, { name: 'line-ads', dimension: '业务线' });
    const cancelled = await createKey(t(), owner.token, { name: 'cc-finance', dimension: '成本中心' });
    const expired = await createKey(t(), owner.token, { name: 'old-pilot', dimension: '部门', expires_at: '2099-01-01' });
    expect((await api(t(), 'POST', `/api/v1/keys/${suspended.api_key_id}/suspend`, owner.token)).status).to.equal(200);
    expect((await api(t(), 'DELETE', `/api/v1/keys/${cancelled.api_key_id}`, owner.token)).status).to.equal(200);
    // No API sets a past expiry; move it back in the database to get an expired key.
    await (await testDatabase()).pool.query(`update api_keys set expires_at = '2020-01-31' where id = $1`, [expired.api_key_id]);

    await login(page, owner);
    const headers = await page.locator('thead th').allInnerTexts();
    expect(headers.map((h) => h.trim())).to.deep.equal(['名称', '部门/业务线', '状态', '用量', '模型范围', '到期时间', '最近使用', '限速', '操作']);
    expect(await page.getByTestId('keys-total').innerText()).to.equal('共 4 条');

    const expectRow = async (name: string, values: Record<string, string>) => {
      const r = row(page, name);
      for (const [column, value] of Object.entries(values)) expect(await cell(r, column), `${name} ${column}`).to.equal(value);
    };
    await expectRow('team-search', {
      dimension: '部门',
      status: '正常',
      usage: '0',
      modelScope: 'tsxt-general',
      expiresAt: '2099-12-31',
      lastUsedAt: '从未使用',
      rateLimit: '—',
    });
    await expectRow('line-ads', { dimension: '业务线', status: '已暂停', expiresAt: '永不过期' });
    await expectRow('cc-finance', { dimension: '成本中心', status: '已注销' });
    await expectRow('old-pilot', { status: '已到期', expiresAt: '2020-01-31' });
    // The name cell carries the display hint, never a secret.
    expect(await cell(row(page, 'team-search'), 'name')).to.contain(active.api_key.slice(0, 9));
    // Without a credit limit the usage column is just the number.
    expect(await page.getByRole('meter').count()).to.equal(0);

    expect(await actionStates(row(page, 'team-search'))).to.deep.equal({ 编辑: true, 暂停: true, 恢复: false, 注销: true, 用量: true });
    expect(await actionStates(row(page, 'line-ads'))).to.deep.equal({ 编辑: true, 暂停: false, 恢复: true, 注销: true, 用量: true });
    expect(await actionStates(row(page, 'cc-finance'))).to.deep.equal({ 编辑: false, 暂停: false, 恢复: false, 注销: false, 用量: true });
    expect(await actionStates(row(page, 'old-pilot'))).to.deep.equal({ 编辑: true, 暂停: false, 恢复: false, 注销: true, 用量: true });
    await screenshot(page, 'key-table');
  });

  it('creates a key in the dialog and shows its secret exactly once', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await login(page, owner);

    await page.getByRole('button', { name: '创建密钥' }).click();
    const form = page.getByRole('dialog', { name: '创建密钥' });
    await form.getByLabel('名称').fill('cs-bot');
    await form.getByLabel('部门/业务线').selectOption('业务线');
    await form.getByRole('checkbox', { name: /tsxt-general/ }).check();
    await form.getByRole('checkbox', { name: '永不过期' }).uncheck();
    await form.getByLabel('到期日期').fill('2099-06-30');
    await form.getByRole('button', { name: '创建', exact: true }).click();

    const shown = page.getByRole('dialog', { name: '密钥已创建' });
    const secret = (await shown.getByTestId('new-secret').innerText()).trim();
    expect(secret).to.match(SECRET_PATTERN);
    expect(secret).to.have.length(51);
    expect(await shown.innerText()).to.contain('关闭后将不再显示此密钥');
    await shown.getByRole('button', { name: '复制' }).click();
    await shown.getByText('已复制到剪贴板').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(secret);
    await screenshot(page, 'create-key-secret');

    await shown.getByRole('button', { name: '我已保存，关闭' }).click();
    await shown.waitFor({ state: 'detached' });
    await row(page, 'cs-bot').waitFor();
    expect(await cell(row(page, 'cs-bot'), 'dimension')).to.equal('业务线');
    expect(await cell(row(page, 'cs-bot'), 'expiresAt')).to.equal('2099-06-30');
    expect(await page.content()).not.to.contain(secret);
    expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }))).not.to.contain(secret);

    // It is the key's real secret: the data plane accepts it.
    const keys = (await api(t(), 'GET', '/api/v1/keys', owner.token)).body;
    expect(keys.items.map((k: any) => k.name)).to.deep.equal(['cs-bot']);
    const models = await fetch(`${t().baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    expect(models.status).to.equal(200);
  });

  it('sets a rate limit in the create dialog, lists it, refuses an out-of-range one by name and edits it back to none', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await login(page, owner);

    await page.getByRole('button', { name: '创建密钥' }).click();
    const form = page.getByRole('dialog', { name: '创建密钥' });
    await form.getByLabel('名称').fill('agents');
    await form.getByRole('checkbox', { name: /tsxt-general/ }).check();
    await form.getByLabel('每分钟请求数').fill('60');
    await form.getByLabel('并发请求数').fill('4');
    await form.getByRole('button', { name: '创建', exact: true }).click();
    await page.getByRole('button', { name: '我已保存，关闭' }).click();

    const r = row(page, 'agents');
    await r.locator('[data-col="rateLimit"]').filter({ hasText: '60 次/分' }).waitFor();
    expect(await cell(r, 'rateLimit')).to.equal('60 次/分 · 并发 4');
    const id = (await r.getAttribute('data-key-id'))!;
    expect((await restKey(owner, id)).rate_limit).to.deep.equal({ requests_per_minute: 60, tokens_per_minute: null, concurrent_requests: 4 });

    // Past the server's range: its 400 names the budget, shown in the dialog, which stays open.
    await r.getByRole('button', { name: '编辑', exact: true }).click();
    const edit = page.getByRole('dialog', { name: '编辑密钥：agents' });
    expect(await edit.getByLabel('每分钟请求数').inputValue()).to.equal('60');
    await edit.getByLabel('每分钟令牌数').fill('2000000000000');
    await edit.getByRole('button', { name: '保存', exact: true }).click();
    const alert = edit.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).to.contain('rate_limit.tokens_per_minute').and.to.contain('invalid_field');
    expect(await edit.getByLabel('每分钟令牌数').getAttribute('aria-invalid')).to.equal('true');
    await screenshot(page, 'rate-limit-invalid');

    // Emptying every budget removes the limit.
    for (const label of ['每分钟请求数', '每分钟令牌数', '并发请求数']) await edit.getByLabel(label).fill('');
    await edit.getByRole('button', { name: '保存', exact: true }).click();
    await edit.waitFor({ state: 'detached' });
    await r.locator('[data-col="rateLimit"]').filter({ hasText: /^—$/ }).waitFor();
    expect((await restKey(owner, id)).rate_limit).to.equal(null);
  });

  it('shows a GraphQL error in words and keeps the dialog open', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await createKey(t(), owner.token, { name: 'taken' });
    await login(page, owner);
    await page.getByRole('button', { name: '创建密钥' }).click();
    const form = page.getByRole('dialog', { name: '创建密钥' });
    await form.getByLabel('名称').fill('taken');
    await form.getByRole('checkbox', { name: /tsxt-general/ }).check();
    await form.getByRole('button', { name: '创建', exact: true }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).to.contain('已有同名的有效密钥').and.to.contain('name_taken');
    await form.getByRole('button', { name: '取消' }).click();
    await form.waitFor({ state: 'detached' });
  });

  it('suspends and resumes a key, and cancels it only after confirmation', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const key = await createKey(t(), owner.token, { name: 'ops-runner' });
    await login(page, owner);
    const r = row(page, 'ops-runner');

    await r.getByRole('button', { name: '暂停', exact: true }).click();
    await waitForStatus(page, 'ops-runner', '已暂停');
    expect((await restKey(owner, key.api_key_id)).status).to.equal('suspended');

    await r.getByRole('button', { name: '恢复', exact: true }).click();
    await waitForStatus(page, 'ops-runner', '正常');
    expect((await restKey(owner, key.api_key_id)).status).to.equal('active');

    await r.getByRole('button', { name: '注销', exact: true }).click();
    const confirm = page.getByRole('alertdialog', { name: '注销密钥？' });
    expect(await confirm.innerText()).to.contain('ops-runner');
    await screenshot(page, 'cancel-confirmation');
    await confirm.getByRole('button', { name: '返回' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect(await cell(r, 'status')).to.equal('正常');
    expect((await restKey(owner, key.api_key_id)).status).to.equal('active');

    await r.getByRole('button', { name: '注销', exact: true }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: '确认注销' }).click();
    await waitForStatus(page, 'ops-runner', '已注销');
    expect((await restKey(owner, key.api_key_id)).status).to.equal('cancelled');
    expect(await actionStates(r)).to.deep.equal({ 编辑: false, 暂停: false, 恢复: false, 注销: false, 用量: true });
  });

  it('edits name, dimension, model scope and expiry', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const key = await createKey(t(), owner.token, { name: 'draft-name', dimension: '部门', expires_at: '2099-01-01' });
    await login(page, owner);

    await row(page, 'draft-name').getByRole('button', { name: '编辑', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: '编辑密钥：draft-name' });
    await dialog.getByLabel('名称').fill('final-name');
    await dialog.getByLabel('部门/业务线').selectOption('成本中心');
    await dialog.getByRole('checkbox', { name: '永不过期' }).check();
    await dialog.getByRole('button', { name: '保存' }).click();
    await dialog.waitFor({ state: 'detached' });

    await row(page, 'final-name').waitFor();
    expect(await cell(row(page, 'final-name'), 'dimension')).to.equal('成本中心');
    expect(await cell(row(page, 'final-name'), 'expiresAt')).to.equal('永不过期');
    const stored = await restKey(owner, key.api_key_id);
    expect(stored).to.include({ name: 'final-name', dimension: '成本中心', expires_at: null });
    expect(stored.model_scope).to.deep.equal(['tsxt-general']);
  });

  it('filters by status and dimension, sorts by time and pages', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const names: string[] = [];
    for (let i = 1; i <= 12; i += 1) {
      const name = `k${String(i).padStart(2, '0')}`;
      names.push(name);
      const key = await createKey(t(), owner.token, { name, dimension: i % 3 === 0 ? '业务线' : '部门' });
      if (i === 5) await api(t(), 'POST', `/api/v1/keys/${key.api_key_id}/suspend`, owner.token);
    }
    await login(page, owner);
    expect(await page.getByTestId('keys-total').innerText()).to.equal('共 12 条');
    expect(await visibleKeyNames(page)).to.deep.equal([...names].reverse());

    await page.getByLabel('状态', { exact: true }).selectOption({ label: '已暂停' });
    await page.getByTestId('keys-total').filter({ hasText: '共 1 条' }).waitFor();
    expect(await visibleKeyNames(page)).to.deep.equal(['k05']);

    await page.getByLabel('状态', { exact: true }).selectOption({ label: '全部' });
    await page.getByLabel('部门/业务线', { exact: true }).selectOption({ label: '业务线' });
    await page.getByTestId('keys-total').filter({ hasText: '共 4 条' }).waitFor();
    expect(await visibleKeyNames(page)).to.deep.equal(['k12', 'k09', 'k06', 'k03']);

    await page.getByLabel('排序').selectOption({ label: '创建时间（最早在前）' });
    await page.getByTestId('keys-total').waitFor();
    await page.locator('tbody tr[data-key-id] .key-name').first().filter({ hasText: 'k03' }).waitFor();
    expect(await visibleKeyNames(page)).to.deep.equal(['k03', 'k06', 'k09', 'k12']);

    await page.getByLabel('部门/业务线', { exact: true }).selectOption({ label: '全部' });
    await page.getByLabel('每页条数').selectOption('10');
    await page.getByText('第 1 / 2 页').waitFor();
    expect(await visibleKeyNames(page)).to.deep.equal(names.slice(0, 10));
    await page.getByRole('button', { name: '下一页' }).click();
    await page.getByText('第 2 / 2 页').waitFor();
    expect(await visibleKeyNames(page)).to.deep.equal(['k11', 'k12']);
    expect(await page.getByRole('button', { name: '下一页' }).isDisabled()).to.equal(true);
    await screenshot(page, 'key-table-page-2');
  });

  it('shows a viewer every mutation disabled', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    await createKey(t(), owner.token, { name: 'visible-to-viewer' });
    const viewer = await addUser(t(), owner.accountId, 'viewer');
    await login(page, viewer);
    await row(page, 'visible-to-viewer').waitFor();
    expect(await page.getByRole('button', { name: '创建密钥' }).isDisabled()).to.equal(true);
    expect(await actionStates(row(page, 'visible-to-viewer'))).to.deep.equal({ 编辑: false, 暂停: false, 恢复: false, 注销: false, 用量: true });
    expect(await page.getByRole('status').filter({ hasText: '只读角色' }).count()).to.equal(1);
    await screenshot(page, 'viewer');
  });

  it('switches to English and back', async () => {
    const { page } = view();
    const owner = await createAccount(t(), { creditLimitMicros: 100_000_000 });
    await createKey(t(), owner.token, { name: 'search-frontend', dimension: '业务线', expires_at: '2099-12-31' });
    const paused = await createKey(t(), owner.token, { name: 'finance-reports', dimension: '成本中心' });
    await api(t(), 'POST', `/api/v1/keys/${paused.api_key_id}/suspend`, owner.token);
    await login(page, owner);
    await page.getByRole('button', { name: 'Switch to English' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys', exact: true }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).to.equal('en');
    expect((await page.locator('thead th').allInnerTexts()).slice(0, 3)).to.deep.equal(['Name', 'Dimension', 'Status']);
    expect(await row(page, 'finance-reports').locator('[data-col="status"]').innerText()).to.equal('Suspended');
    await screenshot(page, 'english');
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'API keys', exact: true }).waitFor();
    await page.getByRole('button', { name: '切换到中文' }).click();
    await page.getByRole('heading', { level: 1, name: 'API 密钥', exact: true }).waitFor();
  });
});
