import { expect } from 'chai';
import { decode, encode } from 'gpt-tokenizer';
import { flattenPrompt, planReply, splitChunks } from '../../../src/providers/mock/mock.mapper';
import { countTokens } from '../../../src/tokenizer';
import { canonicalRequest, fakeDeployment } from '../../support/fake-upstreams';

describe('Mock mapper', () => {
  const deployment = fakeDeployment('mock', { model: 'sim-medium' });

  it('echoes the start of the last user text after the model name', () => {
    const long = 'Please summarise the quarterly report for the finance department and list three risks.';
    const reply = planReply(canonicalRequest({ messages: [{ role: 'user', content: [{ type: 'text', text: long }] }] }), deployment);
    expect(reply.text.startsWith(`Mock reply from sim-medium: ${long.slice(0, 60)}…`)).to.equal(true);
    expect(reply.outputTokens).to.equal(countTokens(reply.text));
  });

  it('never cuts a character in two when chunking', () => {
    expect(splitChunks('ab😀cd', 3)).to.deep.equal(['ab😀', 'cd']);
    expect(splitChunks('', 3)).to.deep.equal([]);
  });

  it('leaves earlier thinking out of the counted prompt', () => {
    const text = flattenPrompt('sys', [
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'secret plan' }, { type: 'text', text: 'a' }] },
    ]);
    expect(text).to.equal('system: sys\n\nuser: q\n\nassistant: a');
  });

  it('counts thinking inside max_tokens', () => {
    const thinking = fakeDeployment('mock', { thinking: true });
    const full = planReply(canonicalRequest(), thinking);
    const thinkingTokens = countTokens(full.thinking?.text ?? '');
    const cut = planReply(canonicalRequest({ maxTokens: thinkingTokens + 3 }), thinking);
    expect(cut.stopReason).to.equal('max_tokens');
    expect(cut.outputTokens).to.equal(thinkingTokens + 3);
    expect(cut.text).to.equal(decode(encode(full.text).slice(0, 3)));
  });
});
