import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import type { AppError } from '../../../src/errors';
import { BodyBudget } from '../../../src/http/body-budget';

const response = () => new EventEmitter() as unknown as ServerResponse;
const keyed = (address: string) => ({ address, credentialed: true });
const anonymous = (address: string) => ({ address, credentialed: false });

function refusal(open: () => unknown): AppError | undefined {
  try {
    open();
  } catch (error) {
    return error as AppError;
  }
  return undefined;
}

describe('BodyBudget', () => {
  it('takes bytes as they arrive and refuses a chunk past the limit while another body holds some', () => {
    const budget = new BodyBudget(1_000);
    const first = budget.open(keyed('203.0.113.1'), response());
    const second = budget.open(keyed('203.0.113.2'), response());
    expect(first.take(600)).to.equal(undefined);
    expect(second.take(300)).to.equal(undefined);
    expect(second.take(200)?.status, 'past the limit').to.equal(503);
    expect(budget.heldBytes).to.equal(900);
  });

  it('lets a body past the whole limit through while nothing else holds any', () => {
    const budget = new BodyBudget(1_000);
    const lone = budget.open(keyed('203.0.113.1'), response());
    expect(lone.take(800)).to.equal(undefined);
    expect(lone.take(800)).to.equal(undefined);
  });

  it('gives everything back when the response closes, however far the body got', () => {
    const budget = new BodyBudget(1_000);
    const res = response();
    budget.open(keyed('203.0.113.1'), res).take(700);
    res.emit('close');
    res.emit('close');
    expect(budget.heldBytes).to.equal(0);
  });

  it('reads at most bodiesPerClient bodies from one client at once, an IPv6 client by its /64, and frees a slot once a body has arrived', () => {
    const budget = new BodyBudget(1_000, 2);
    const first = budget.open(keyed('2001:db8:1:2::5'), response());
    budget.open(keyed('2001:db8:1:2::6'), response());
    const refused = refusal(() => budget.open(keyed('2001:db8:1:2:ffff::1'), response()));
    expect(refused?.status).to.equal(429);
    expect(refused?.headers['retry-after']).to.equal('1');
    expect(refusal(() => budget.open(keyed('2001:db8:1:3::1'), response())), 'another /64').to.equal(undefined);
    first.received();
    expect(refusal(() => budget.open(keyed('2001:db8:1:2::7'), response()))).to.equal(undefined);
  });

  it('lets one client address hold at most its part of the bytes (a quarter by default), its first body excepted, and frees it as its bodies close', () => {
    const budget = new BodyBudget(1_000);
    expect(budget.clientLimitBytes).to.equal(250);
    const hoarded = response();
    const first = budget.open(keyed('203.0.113.1'), hoarded);
    expect(first.take(400), 'a lone body may pass the client part').to.equal(undefined);
    const refusal = budget.open(keyed('203.0.113.1'), response()).take(10);
    expect(refusal?.status).to.equal(503);
    expect(refusal?.message).to.include('One client address');
    expect(refusal?.headers).to.deep.include({ 'retry-after': '1', connection: 'close' });
    expect(budget.open(keyed('203.0.113.2'), response()).take(200), 'another address').to.equal(undefined);
    hoarded.emit('close');
    expect(budget.open(keyed('203.0.113.1'), response()).take(200), 'once the first body is answered').to.equal(undefined);
  });

  it('takes the client part from GATEWAY_CLIENT_BODY_BUDGET_MB when set', () => {
    const budget = new BodyBudget(1_000, 64, 100);
    budget.open(keyed('203.0.113.1'), response()).take(90);
    expect(budget.open(keyed('203.0.113.1'), response()).take(20)?.status).to.equal(503);
  });

  it('lets callers without a credential hold an eighth of the budget together, whatever their addresses, leaving the rest to keyed calls', () => {
    const budget = new BodyBudget(8_000);
    expect(budget.anonymousLimitBytes).to.equal(1_000);
    for (let i = 0; i < 10; i += 1) expect(budget.open(anonymous(`198.51.100.${i}`), response()).take(100), `anonymous body ${i}`).to.equal(undefined);
    const refusal = budget.open(anonymous('198.51.100.200'), response()).take(100);
    expect(refusal?.status).to.equal(503);
    expect(refusal?.message).to.include('without an API key or console session');
    expect(budget.open(keyed('203.0.113.9'), response()).take(1_900), 'a keyed body from elsewhere').to.equal(undefined);
  });
});
