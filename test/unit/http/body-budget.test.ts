import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import type { AppError } from '../../../src/errors';
import { BodyBudget } from '../../../src/http/body-budget';

const response = () => new EventEmitter() as unknown as ServerResponse;

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
    const first = budget.open('203.0.113.1', response());
    const second = budget.open('203.0.113.2', response());
    expect(first.take(600)).to.equal(true);
    expect(second.take(300)).to.equal(true);
    expect(second.take(200), 'past the limit').to.equal(false);
    expect(budget.heldBytes).to.equal(900);
  });

  it('lets a body past the whole limit through while nothing else holds any', () => {
    const budget = new BodyBudget(1_000);
    const lone = budget.open('203.0.113.1', response());
    expect(lone.take(800)).to.equal(true);
    expect(lone.take(800)).to.equal(true);
  });

  it('gives everything back when the response closes, however far the body got', () => {
    const budget = new BodyBudget(1_000);
    const res = response();
    budget.open('203.0.113.1', res).take(700);
    res.emit('close');
    res.emit('close');
    expect(budget.heldBytes).to.equal(0);
  });

  it('reads at most bodiesPerClient bodies from one client at once, an IPv6 client by its /64, and frees a slot once a body has arrived', () => {
    const budget = new BodyBudget(1_000, 2);
    const first = budget.open('2001:db8:1:2::5', response());
    budget.open('2001:db8:1:2::6', response());
    const refused = refusal(() => budget.open('2001:db8:1:2:ffff::1', response()));
    expect(refused?.status).to.equal(429);
    expect(refused?.headers['retry-after']).to.equal('1');
    expect(refusal(() => budget.open('2001:db8:1:3::1', response())), 'another /64').to.equal(undefined);
    first.received();
    expect(refusal(() => budget.open('2001:db8:1:2::7', response()))).to.equal(undefined);
  });
});
