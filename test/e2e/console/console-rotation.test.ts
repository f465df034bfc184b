// The console's 轮换 (rotate) action in real Chromium against the real app:
// the grace period, the successor's secret shown once with the old key's fate
// and last use, both keys in the table, and the emergency rotation.
import { expect } from 'chai';
import { api, createAccount, createKey } from '../../support/app';
import { call, requestBody } from '../../support/data-plane';
import { actionStates, login, screenshot, SECRET_PATTERN, withConsoleBrowser } from './console-browser';

describe('console: 轮换 (rotate a key, browser)', function () {
  this.timeout(60_000);
  const { t, view } = withConsoleBrowser();
  const keyRow = (id: string) => view().page.locator(`tbody tr[data-key-id="${id}"]`);

  it('rotates with a grace period: the new secret once, the old key’s end and last use, and both keys in the table', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const old = await createKey(t(), owner.token, { name: 'payments-bot', dimension: '业务线' });
    expect((await call(t(), 'messages', old.api_key, requestBody('messages', 'tsxt-general', 'Say hello.'))).status).to.equal(200);
    const lastUsed = (await api(t(), 'GET', `/api/v1/keys/${old.api_key_id}`, owner.token)).body.last_used_at as string;
    await login(page, owner);

    await keyRow(old.api_key_id).getByRole('button', { name: '轮换', exact: true }).click();
    const form = page.getByRole('dialog', { name: '轮换密钥“payments-bot”' });
    expect(await form.getByLabel('宽限期（小时）').inputValue()).to.equal('24');
    await form.getByLabel('宽限期（小时）').fill('48');
    await form.getByRole('button', { name: '轮换', exact: true }).click();

    const shown = page.getByRole('dialog', { name: '密钥已轮换' });
    const secret = (await shown.getByTestId('new-secret').innerText()).trim();
    expect(secret).to.match(SECRET_PATTERN);
    const note = await shown.getByTestId('rotation-old-key').innerText();
    expect(note).to.contain('旧密钥将于').and.to.contain(`旧密钥最近使用：${lastUsed}`);
    await screenshot(page, 'rotate-key-secret');
    await shown.getByRole('button', { name: '我已保存，关闭' }).click();
    await shown.waitFor({ state: 'detached' });
    expect(await page.content()).not.to.contain(secret);

    const keys = (await api(t(), 'GET', '/api/v1/keys', owner.token)).body.items as Array<{ api_key_id: string; name: string; rotated_from: string | null }>;
    const successor = keys.find((k) => k.rotated_from === old.api_key_id);
    expect(successor?.name).to.equal('payments-bot');
    await keyRow(successor!.api_key_id).waitFor();
    expect(await keyRow(old.api_key_id).locator('[data-rotation="old"]').innerText()).to.match(/^已轮换：\d{4}-\d{2}-\d{2} \d{2}:\d{2} 注销$/);
    expect(await keyRow(old.api_key_id).locator('[data-col="lastUsedAt"]').innerText()).to.equal(lastUsed);
    expect(await keyRow(successor!.api_key_id).locator('[data-rotation="new"]').innerText()).to.equal('由轮换创建');
    expect(await keyRow(old.api_key_id).getByRole('button', { name: '轮换', exact: true }).isEnabled()).to.equal(false);
    expect(await keyRow(successor!.api_key_id).getByRole('button', { name: '轮换', exact: true }).isEnabled()).to.equal(true);
    expect(await actionStates(keyRow(old.api_key_id))).to.include({ 注销: true });
    await screenshot(page, 'rotated-key-table');

    // Both secrets work during the grace; the new one is the key's real secret.
    expect((await call(t(), 'chat', secret, requestBody('chat', 'tsxt-general', 'Hi.'))).status).to.equal(200);
    expect((await call(t(), 'chat', old.api_key, requestBody('chat', 'tsxt-general', 'Hi.'))).status).to.equal(200);
  });

  it('grace 0 is the emergency rotation: it warns, and the old key is suspended at once', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const old = await createKey(t(), owner.token, { name: 'leaked-bot' });
    await login(page, owner);

    await keyRow(old.api_key_id).getByRole('button', { name: '轮换', exact: true }).click();
    const form = page.getByRole('dialog', { name: '轮换密钥“leaked-bot”' });
    await form.getByLabel('宽限期（小时）').fill('0');
    await form.getByRole('note').filter({ hasText: '紧急轮换' }).waitFor();
    await form.getByRole('button', { name: '轮换', exact: true }).click();
    const shown = page.getByRole('dialog', { name: '密钥已轮换' });
    expect(await shown.getByTestId('rotation-old-key').innerText()).to.contain('旧密钥已立即暂停').and.to.contain('旧密钥从未使用');
    await shown.getByRole('button', { name: '我已保存，关闭' }).click();

    await keyRow(old.api_key_id).locator('[data-col="status"] .badge').filter({ hasText: /^已暂停$/ }).waitFor();
    expect(await keyRow(old.api_key_id).locator('[data-rotation="old"]').innerText()).to.equal('已轮换（紧急）：已暂停');
    const refused = await call(t(), 'messages', old.api_key, requestBody('messages', 'tsxt-general', 'Hi.'));
    expect(refused.status).to.equal(403);
  });

  it('speaks English after the switch', async () => {
    const { page } = view();
    const owner = await createAccount(t());
    const old = await createKey(t(), owner.token, { name: 'en-bot' });
    await login(page, owner);
    await page.getByRole('button', { name: /English/ }).click();
    await keyRow(old.api_key_id).getByRole('button', { name: 'Rotate', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Rotate key “en-bot”' });
    await form.getByLabel('Grace period (hours)').fill('1');
    await form.getByRole('button', { name: 'Rotate', exact: true }).click();
    const shown = page.getByRole('dialog', { name: 'Key rotated' });
    expect(await shown.getByTestId('rotation-old-key').innerText()).to.contain('The old key is cancelled at').and.to.contain('never used');
  });
});
