// Rotation's pure rules: the grace a request asks for, and how a key whose
// grace has ended reads (cancelled, whatever its stored state).
import { expect } from 'chai';
import { DEFAULT_GRACE_HOURS, MAX_GRACE_HOURS, graceHoursOf } from '../../../src/domain/keys/key-rotation.service';
import { rotateKeyInput } from '../../../src/control-plane/rest/key.mapper';
import { graceEnded } from '../../../src/domain/keys/api-key.service';
import { effectiveStatus, type StoredStatus } from '../../../src/domain/keys/key-status';
import { AppError } from '../../../src/errors';

// A REST body's way to the grace: the transport's wire check, then the domain's rule.
const parseRotateInput = (body: unknown) => ({ graceHours: graceHoursOf(rotateKeyInput(body)) });

describe('key rotation rules', () => {
  describe('parseRotateInput', () => {
    const accepted: Array<[unknown, number]> = [
      [undefined, DEFAULT_GRACE_HOURS],
      [null, DEFAULT_GRACE_HOURS],
      [{}, DEFAULT_GRACE_HOURS],
      [{ grace_hours: null }, DEFAULT_GRACE_HOURS],
      [{ grace_hours: 0 }, 0],
      [{ grace_hours: 1 }, 1],
      [{ grace_hours: MAX_GRACE_HOURS }, MAX_GRACE_HOURS],
    ];
    for (const [body, hours] of accepted) {
      it(`${JSON.stringify(body)} → ${hours} h`, () => expect(parseRotateInput(body).graceHours).to.equal(hours));
    }

    const refused: Array<[unknown, string]> = [
      [{ grace_hours: -1 }, 'grace_hours'],
      [{ grace_hours: 1.5 }, 'grace_hours'],
      [{ grace_hours: MAX_GRACE_HOURS + 1 }, 'grace_hours'],
      [{ grace_hours: '24' }, 'grace_hours'],
      [{ grace_hours: Number.NaN }, 'grace_hours'],
      [{ grace: 24 }, 'grace'],
      [[24], 'body'],
      ['24', 'body'],
    ];
    for (const [body, field] of refused) {
      it(`${JSON.stringify(body)} → 400 naming ${field}`, () => {
        try {
          parseRotateInput(body);
          expect.fail('accepted');
        } catch (error) {
          expect(error).to.be.instanceOf(AppError);
          expect(error).to.include({ status: 400, field });
        }
      });
    }
  });

  describe('a rotated-away key', () => {
    const now = new Date('2026-11-29T12:00:00Z');
    it('is in its grace until cancels_at, and past it from that instant', () => {
      expect(graceEnded(null, now)).to.equal(false);
      expect(graceEnded(new Date(now.getTime() + 1), now)).to.equal(false);
      expect(graceEnded(now, now)).to.equal(true);
      expect(graceEnded(new Date(now.getTime() - 1), now)).to.equal(true);
    });

    const stored: StoredStatus[] = ['active', 'suspended', 'cancelled'];
    for (const status of stored) {
      it(`reads cancelled once its grace has ended (stored ${status}, expired, over the credit limit)`, () => {
        for (const overCreditLimit of [false, true]) {
          for (const expiresAt of [null, '2026-01-01']) {
            expect(effectiveStatus({ stored: status, expiresAt, today: '2026-11-29', overCreditLimit, graceEnded: true })).to.deep.equal({
              status: 'cancelled',
              suspendedReason: null,
            });
          }
        }
      });
    }
    it('reads as its stored state while the grace runs', () => {
      expect(effectiveStatus({ stored: 'active', expiresAt: null, today: '2026-11-29', overCreditLimit: false, graceEnded: false }).status).to.equal('active');
      expect(effectiveStatus({ stored: 'suspended', expiresAt: null, today: '2026-11-29', overCreditLimit: false, graceEnded: false })).to.deep.equal({
        status: 'suspended',
        suspendedReason: 'owner',
      });
    });
  });
});
