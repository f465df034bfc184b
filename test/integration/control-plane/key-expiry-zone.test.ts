// Expiry follows the account's time zone (docs/architecture.md §14): a key with
// expires_at = D works through the whole of D in the account zone and reads
// expired from 00:00 of D+1 there, whatever the date is in UTC.
//
// The clock is not ours to set, so dates are picked relative to "today" in each
// zone. Pacific/Kiritimati (UTC+14) and Pacific/Pago_Pago (UTC−11) are 25 hours
// apart: at every instant their dates differ, so the zone-dependent cases below
// are exercised on every run, not only at certain hours.
import { expect } from 'chai';
import { api, createAccount, createKey, startTestApp, type TestAccount, type TestApp } from '../../support/app';
import { addDays, setExpiresAt, zoneToday } from './support';

const SHANGHAI = 'Asia/Shanghai';
const KIRITIMATI = 'Pacific/Kiritimati';
const PAGO_PAGO = 'Pacific/Pago_Pago';

describe('REST control plane: expiry in the account time zone', () => {
  let t: TestApp;
  const accounts: Record<string, TestAccount> = {};

  before(async () => {
    t = await startTestApp();
    for (const zone of [SHANGHAI, KIRITIMATI, PAGO_PAGO, 'UTC']) accounts[zone] = await createAccount(t, { timezone: zone });
  });

  after(async () => {
    await t.close();
  });

  async function keyExpiring(zone: string, date: string): Promise<string> {
    // Created with today's date (always accepted), then moved with SQL.
    const key = await createKey(t, accounts[zone]!.token, { expires_at: zoneToday(zone) });
    await setExpiresAt(key.api_key_id, date);
    return key.api_key_id;
  }

  const statusOf = async (zone: string, id: string) => (await api(t, 'GET', `/api/v1/keys/${id}`, accounts[zone]!.token)).body.status as string;

  it('the test zones really are on different dates right now', () => {
    expect(zoneToday(KIRITIMATI) > zoneToday(PAGO_PAGO)).to.equal(true);
  });

  describe('Asia/Shanghai (UTC+8)', () => {
    it('expires_at = today in Shanghai: active', async () => {
      const id = await keyExpiring(SHANGHAI, zoneToday(SHANGHAI));
      expect(await statusOf(SHANGHAI, id)).to.equal('active');
    });

    it('expires_at = yesterday in Shanghai: expired, even while that is still today in UTC', async () => {
      const yesterday = addDays(zoneToday(SHANGHAI), -1);
      const id = await keyExpiring(SHANGHAI, yesterday);
      expect(await statusOf(SHANGHAI, id)).to.equal('expired');
      const list = await api(t, 'GET', '/api/v1/keys?status=expired', accounts[SHANGHAI]!.token);
      expect(list.body.items.map((k: { api_key_id: string }) => k.api_key_id)).to.include(id);

      // The same date on a UTC account: active exactly when UTC has not yet passed it
      // (between 16:00 and 24:00 UTC, Shanghai's yesterday is UTC's today).
      const utcId = await keyExpiring('UTC', yesterday);
      expect(await statusOf('UTC', utcId)).to.equal(yesterday >= zoneToday('UTC') ? 'active' : 'expired');
    });

    it('expires_at = tomorrow in Shanghai: active', async () => {
      const id = await keyExpiring(SHANGHAI, addDays(zoneToday(SHANGHAI), 1));
      expect(await statusOf(SHANGHAI, id)).to.equal('active');
    });
  });

  describe('one date, two zones 25 hours apart', () => {
    it("Pago Pago's today is still active in Pago Pago but already expired in Kiritimati", async () => {
      const date = zoneToday(PAGO_PAGO);
      const inPagoPago = await keyExpiring(PAGO_PAGO, date);
      const inKiritimati = await keyExpiring(KIRITIMATI, date);
      expect(await statusOf(PAGO_PAGO, inPagoPago)).to.equal('active');
      expect(await statusOf(KIRITIMATI, inKiritimati)).to.equal('expired');
    });

    it("Kiritimati's yesterday is expired there, and not expired in Pago Pago when it is Pago Pago's today or later", async () => {
      const date = addDays(zoneToday(KIRITIMATI), -1);
      const inKiritimati = await keyExpiring(KIRITIMATI, date);
      const inPagoPago = await keyExpiring(PAGO_PAGO, date);
      expect(await statusOf(KIRITIMATI, inKiritimati)).to.equal('expired');
      expect(await statusOf(PAGO_PAGO, inPagoPago)).to.equal(date >= zoneToday(PAGO_PAGO) ? 'active' : 'expired');
    });
  });

  describe('creating with expires_at = today in the account zone', () => {
    for (const zone of [KIRITIMATI, PAGO_PAGO, SHANGHAI]) {
      it(`${zone}: today there is accepted (201, active), whatever the date in UTC`, async () => {
        const today = zoneToday(zone);
        const response = await api(t, 'POST', '/api/v1/keys', accounts[zone]!.token, {
          name: `today-${zone}`,
          dimension: '部门',
          model_scope: ['tsxt-general'],
          expires_at: today,
        });
        expect(response.status, `today in ${zone} is ${today}, UTC ${zoneToday('UTC')}: ${JSON.stringify(response.body)}`).to.equal(201);
        expect(response.body).to.include({ expires_at: today, status: 'active' });
      });

      it(`${zone}: yesterday there is refused (400 expires_at)`, async () => {
        const response = await api(t, 'POST', '/api/v1/keys', accounts[zone]!.token, {
          name: `yesterday-${zone}`,
          dimension: '部门',
          model_scope: ['tsxt-general'],
          expires_at: addDays(zoneToday(zone), -1),
        });
        expect(response.status).to.equal(400);
        expect(response.body.error.field).to.equal('expires_at');
      });
    }

    it("Kiritimati: Pago Pago's today (already past in Kiritimati) is refused", async () => {
      const response = await api(t, 'POST', '/api/v1/keys', accounts[KIRITIMATI]!.token, {
        name: 'pago-date-in-kiritimati',
        dimension: '部门',
        model_scope: ['tsxt-general'],
        expires_at: zoneToday(PAGO_PAGO),
      });
      expect(response.status).to.equal(400);
      expect(response.body.error.field).to.equal('expires_at');
    });

    it("Pago Pago: Kiritimati's today (still in the future in Pago Pago) is accepted and active", async () => {
      const response = await api(t, 'POST', '/api/v1/keys', accounts[PAGO_PAGO]!.token, {
        name: 'kiritimati-date-in-pago',
        dimension: '部门',
        model_scope: ['tsxt-general'],
        expires_at: zoneToday(KIRITIMATI),
      });
      expect(response.status).to.equal(201);
      expect(response.body.status).to.equal('active');
    });

    it("updating an expired Kiritimati key to Kiritimati's today revives it; Pago Pago's today does not", async () => {
      const id = await keyExpiring(KIRITIMATI, addDays(zoneToday(KIRITIMATI), -2));
      const refused = await api(t, 'PUT', `/api/v1/keys/${id}`, accounts[KIRITIMATI]!.token, { expires_at: zoneToday(PAGO_PAGO) });
      expect(refused.status).to.equal(400);
      expect(await statusOf(KIRITIMATI, id)).to.equal('expired');
      const revived = await api(t, 'PUT', `/api/v1/keys/${id}`, accounts[KIRITIMATI]!.token, { expires_at: zoneToday(KIRITIMATI) });
      expect(revived.status).to.equal(200);
      expect(revived.body.status).to.equal('active');
    });
  });
});
