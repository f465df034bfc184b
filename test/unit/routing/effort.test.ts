import { expect } from 'chai';
import { boundByEffort } from '../../../src/routing/effort';
import type { Assessment } from '../../../src/routing/complexity';

const assessed = (tier: Assessment['tier']): Assessment => ({ tier, score: 0.5, reasons: ['analysis'] });

describe('routing: the caller’s effort bounds the assessed tier', () => {
  it('low effort keeps a heavy or thinking assessment at standard and says why', () => {
    expect(boundByEffort(assessed('heavy'), 'low', false)).to.deep.equal({ tier: 'standard', score: 0.5, reasons: ['effort_low', 'analysis'] });
    expect(boundByEffort(assessed('thinking'), 'low', false).tier).to.equal('standard');
    expect(boundByEffort(assessed('light'), 'low', false).tier).to.equal('light');
  });

  it('max effort lifts a light prompt to heavy; medium and high leave the assessment alone', () => {
    expect(boundByEffort(assessed('light'), 'max', false)).to.deep.equal({ tier: 'heavy', score: 0.5, reasons: ['effort_max', 'analysis'] });
    expect(boundByEffort(assessed('thinking'), 'max', false).tier).to.equal('thinking');
    for (const effort of ['medium', 'high'] as const) expect(boundByEffort(assessed('light'), effort, false).tier).to.equal('light');
  });

  it('an explicit thinking request and effort none are not bounded', () => {
    expect(boundByEffort(assessed('thinking'), 'low', true).tier).to.equal('thinking');
    expect(boundByEffort(assessed('heavy'), 'none', false).tier).to.equal('heavy');
  });
});
