import { expect } from 'chai';
import type { CanonicalMessage, CanonicalRequest } from '../../../src/data-plane/canonical';
import { TIERS, type Tier } from '../../../src/routing/catalog.types';
import { AUTO_THINKING_SCORE, DEFAULT_ASSESSMENT_THRESHOLDS, assessComplexity } from '../../../src/routing/complexity';
import { evaluateRouting, loadRoutingEval } from '../../../scripts/eval-routing';

function ask(text: string, extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'tsxt-general',
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    maxTokens: 4096,
    stream: false,
    ...extra,
  };
}

function assess(request: CanonicalRequest) {
  return assessComplexity(request, DEFAULT_ASSESSMENT_THRESHOLDS);
}

const REVIEW_CODE = `
export async function createOrder(req, res) {
  const items = req.body.items;
  let total = 0;
  for (var i = 0; i <= items.length; i++) {
    const product = await db.query("SELECT * FROM products WHERE id = " + items[i].productId);
    total += product.rows[0].price * items[i].qty;
  }
  const order = await db.query("INSERT INTO orders (user_id, total) VALUES (" + req.params.id + ", " + total + ")");
  for (const item of items) {
    db.query("INSERT INTO order_items (order_id, product_id) VALUES ($1, $2)", [order.rows[0].id, item.productId]);
  }
  res.json({ ok: true, orderId: order.rows[0].id });
}
`;

describe('complexity assessment', () => {
  describe('trivial requests stay light', () => {
    const trivial = ['hi', '你好', "what's 2+2", '翻译：早上好', 'Thanks!', '晚安', 'What is the capital of Australia?', '中国的首都是哪里？'];
    for (const text of trivial) {
      it(`"${text}" → light, tagged trivial`, () => {
        const result = assess(ask(text));
        expect(result.tier).to.equal('light');
        expect(result.reasons).to.include('trivial');
        expect(result.score).to.be.below(DEFAULT_ASSESSMENT_THRESHOLDS.standard);
      });
    }
  });

  it('routes ordinary asks (explain, write) to standard in both languages', () => {
    expect(assess(ask('Explain the difference between TCP and UDP in a few paragraphs.')).tier).to.equal('standard');
    expect(assess(ask('用Python写一个函数，判断一个整数是不是质数。')).tier).to.equal('standard');
  });

  it('routes a long code review to heavy, naming code, analysis and length', () => {
    const prompt = `Please do a thorough code review of this module: security, bugs, performance, and propose a fixed version.\n\n\`\`\`js${REVIEW_CODE.repeat(12)}\`\`\``;
    const result = assess(ask(prompt));
    expect(result.tier).to.equal('heavy');
    expect(result.reasons).to.include.members(['code', 'analysis', 'long']);
  });

  it('routes a Chinese architecture brief to heavy, naming analysis and multi_step', () => {
    const result = assess(
      ask('设计一个支持千万级日活的即时通讯系统架构，需要支持单聊、群聊、离线消息、多端同步和已读回执。请说明接入层、消息存储、推送和多端一致性的设计，对每个关键点比较两种以上方案，分析优缺点和权衡，最后给出推荐方案。'),
    );
    expect(result.tier).to.equal('heavy');
    expect(result.reasons).to.include.members(['analysis', 'multi_step']);
  });

  it('forces thinking for an explicit thinking request, still reporting the score', () => {
    const result = assess(ask('hi', { thinking: { type: 'enabled', budgetTokens: 2048 } }));
    expect(result.tier).to.equal('thinking');
    expect(result.reasons[0]).to.equal('explicit_thinking');
    expect(result.score).to.be.below(DEFAULT_ASSESSMENT_THRESHOLDS.standard);
    expect(assess(ask('hi', { thinking: { type: 'enabled' } })).tier).to.equal('thinking');
  });

  it('lets the assessment decide under adaptive thinking, and never thinks when thinking is disabled', () => {
    expect(assess(ask('hi', { thinking: { type: 'adaptive' } })).tier).to.equal('light');
    const proof = ask(
      'Let $a, b, c > 0$ with $abc = 1$. Prove that $\\frac{1}{a^3(b+c)} + \\frac{1}{b^3(c+a)} + \\frac{1}{c^3(a+b)} \\ge \\frac{3}{2}$ and derive when equality holds.',
    );
    expect(assess({ ...proof, thinking: { type: 'adaptive' } }).tier).to.equal('thinking');
    expect(assess({ ...proof, thinking: { type: 'disabled' } }).tier).to.equal('heavy');
  });

  it('picks thinking by itself only for a very high score with proof wording', () => {
    const proof = assess(ask('Let $a, b, c > 0$ with $abc = 1$. Prove that $\\frac{1}{a^3(b+c)} + \\frac{1}{b^3(c+a)} + \\frac{1}{c^3(a+b)} \\ge \\frac{3}{2}$ and derive when equality holds.'));
    expect(proof.tier).to.equal('thinking');
    expect(proof.score).to.be.at.least(AUTO_THINKING_SCORE);
    expect(proof.reasons).to.include.members(['reasoning', 'math']);

    // As busy as it gets without anything to prove: heavy, however high it scores.
    const busy = assess(
      ask(`Review this code, compare the trade-offs of each fix, analyze the root cause, design a migration plan step by step and evaluate the risks.\n\n\`\`\`js${REVIEW_CODE.repeat(12)}\`\`\``, { maxTokens: 16_000 }),
    );
    expect(busy.score).to.be.at.least(AUTO_THINKING_SCORE);
    expect(busy.tier).to.equal('heavy');
  });

  it('names tools, a big system prompt, a large output and many turns', () => {
    const history: CanonicalMessage[] = [];
    for (let i = 0; i < 6; i += 1) {
      history.push({ role: 'user', content: [{ type: 'text', text: `question ${i}` }] });
      history.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] });
    }
    const request = ask('Summarize where we are.', {
      system: 'You are a support agent. Follow the refund policy strictly. '.repeat(40),
      maxTokens: 8192,
      tools: [{ name: 'lookup_order', inputSchema: { type: 'object' } }],
    });
    request.messages = [...history, ...request.messages];
    expect(assess(request).reasons).to.include.members(['tools', 'big_system', 'large_output', 'many_turns']);
  });

  it('treats the default max_tokens of 4096 as saying nothing about the task', () => {
    expect(assess(ask('hi', { maxTokens: 4096 })).reasons).not.to.include('large_output');
  });

  it('reads the task from the last user words when the last message is only tool results', () => {
    const request = ask('Write a SQL query that returns the top 5 customers by revenue.');
    request.messages.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'schema', input: { table: 'orders' } }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [{ type: 'text', text: 'orders(id, customer_id, amount)' }] }] },
    );
    const result = assess(request);
    expect(result.reasons).to.include('code');
    expect(result.tier).to.equal('standard');
  });

  it('grows (never shrinks) with prompt length', () => {
    const sentence = 'Here is some more background about the project and the people involved. ';
    const scores = [1, 4, 16, 64, 256, 1024].map((n) => assess(ask(sentence.repeat(n))).score);
    for (let i = 1; i < scores.length; i += 1) expect(scores[i]).to.be.at.least(scores[i - 1] ?? 0);
    expect(scores[scores.length - 1]).to.be.above(scores[0] ?? 0);
  });

  it('follows the thresholds it is given', () => {
    const request = ask('Explain the difference between TCP and UDP in a few paragraphs.');
    const { score } = assess(request);
    expect(assessComplexity(request, { standard: score + 0.01, heavy: 0.9 }).tier).to.equal('light');
    expect(assessComplexity(request, { standard: 0.01, heavy: score }).tier).to.equal('heavy');
  });

  it('reports a score between 0 and 1 with two decimals', () => {
    for (const text of ['', 'hi', REVIEW_CODE.repeat(50)]) {
      const { score } = assess(ask(text));
      expect(score).to.be.within(0, 1);
      expect(Math.round(score * 100) / 100).to.equal(score);
    }
  });

  describe('labelled evaluation set (test/fixtures/routing-eval.json)', () => {
    const items = loadRoutingEval();
    const result = evaluateRouting(items);
    const order = (tier: Tier): number => TIERS.indexOf(tier);

    it('is large, balanced across tiers and half Chinese, half English', () => {
      expect(items.length).to.be.at.least(160);
      expect(new Set(items.map((item) => item.id)).size).to.equal(items.length);
      for (const tier of TIERS) expect(items.filter((item) => item.expected === tier).length).to.be.at.least(35);
      expect(result.byLang.zh.count).to.be.within(items.length * 0.4, items.length * 0.6);
    });

    // Achieved 92.6% overall (zh 94.3%, en 91.0%) when this was written; the
    // margin allows a small trade when improving one area, not a regression.
    it('keeps accuracy at 90% or better, and 88% or better per language', () => {
      expect(result.accuracy).to.be.at.least(0.9);
      expect(result.byLang.zh.accuracy).to.be.at.least(0.88);
      expect(result.byLang.en.accuracy).to.be.at.least(0.88);
    });

    it('never routes a light item to heavy or thinking', () => {
      expect(result.matrix.light.heavy).to.equal(0);
      expect(result.matrix.light.thinking).to.equal(0);
    });

    // Misses should land on a neighbouring tier. The one known exception is
    // thinking-zh-12 (the twelve-ball weighing puzzle → standard): nothing in
    // its wording but one "证明" says how hard it is.
    it('errs by more than one tier at most once', () => {
      const far = result.misses.filter(({ item, assessment }) => Math.abs(order(item.expected) - order(assessment.tier)) > 1);
      expect(far.map(({ item, assessment }) => `${item.id} → ${assessment.tier}`)).to.have.length.at.most(1);
    });
  });
});
