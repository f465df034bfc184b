import { expect } from 'chai';
import type { CanonicalMessage, CanonicalRequest } from '../../../src/core/canonical';
import { TIERS } from '../../../src/core/catalog.types';
import { FEATURE_NAMES } from '../../../src/routing/complexity-features';
import { DEFAULT_ASSESSMENT_THRESHOLDS, assessComplexity } from '../../../src/routing/complexity';

/** The tags the README documents for `x-route`. */
const REASON_TAGS = ['explicit_thinking', 'trivial', 'length', 'long', 'paste', 'history', 'many_turns', 'lookup', 'chat', 'produce', 'explain', 'code', 'edit', 'analysis', 'design', 'breadth', 'reasoning', 'optimisation', 'math', 'arithmetic', 'constraints', 'show_work', 'follow_up', 'list', 'figures', 'short', 'questions', 'deliberation', 'closed', 'tool_loop', 'tool_failed', 'system', 'images', 'wording'];
import { routingModelProblem } from '../../../src/routing/routing-model';
import weights from '../../../src/routing/routing-model.json' with { type: 'json' };
import { benchAssessment, evaluate } from '../../../scripts/eval-routing';
import { HARNESSES, harnessBody, harnessCapture, loadCorpus, toRequest, type CorpusItem, type Harness } from '../../../scripts/routing-corpus';
import { readConversation } from '../../../src/routing/complexity-conversation';

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

/** The same ask as a Claude Code turn: its 16 kB system prompt, twelve tools, a project-memory reminder, and `rounds` earlier tool rounds reading a file. */
function agentTurn(prompt: string, agent: CorpusItem['agent'] = {}): CanonicalRequest {
  return toRequest({ id: 'agent-test', lang: 'en', tier: 'light', domain: 'coding', kind: 'agent', reason: '', prompt, agent, split: 'test' });
}

const REVIEW_CODE = `
export async function createOrder(req, res) {
  const items = req.body.items;
  let total = 0;
  for (var i = 0; i <= items.length; i++) {
    const product = await db.query("SELECT * FROM products WHERE id = " + items[i].productId);
    total += product.rows[0].price * items[i].qty;
  }
  res.json({ ok: true, total });
}
`;

const PROOF =
  'Let $a, b, c > 0$ with $abc = 1$. Prove that $\\frac{1}{a^3(b+c)} + \\frac{1}{b^3(c+a)} + \\frac{1}{c^3(a+b)} \\ge \\frac{3}{2}$ and derive when equality holds.';

describe('complexity assessment', () => {
  it('loads a committed model that matches the features the code measures', () => {
    expect(routingModelProblem).to.equal(undefined);
    expect(weights.features).to.deep.equal([...FEATURE_NAMES]);
  });

  describe('trivial requests stay light', () => {
    const trivial = ['hi', '你好', "what's 2+2", 'Thanks!', '晚安', 'What is the capital of Australia?', '中国的首都是哪里？'];
    for (const text of trivial) {
      it(`"${text}" → light, tagged trivial`, () => {
        const result = assess(ask(text));
        expect(result.tier).to.equal('light');
        expect(result.reasons).to.include('trivial');
        expect(result.score).to.be.below(DEFAULT_ASSESSMENT_THRESHOLDS.standard);
      });
    }
  });

  it('keeps a one-phrase translation light, though it asks for a translation', () => {
    const result = assess(ask('翻译：早上好'));
    expect(result.tier).to.equal('light');
    expect(result.reasons).not.to.include('trivial');
  });

  it('routes ordinary asks (explain, write) to standard in both languages', () => {
    expect(assess(ask('Explain the difference between TCP and UDP in a few paragraphs.')).tier).to.equal('standard');
    expect(assess(ask('用Python写一个函数，判断一个整数是不是质数。')).tier).to.equal('standard');
  });

  it('routes a thorough code review to heavy, naming code', () => {
    const prompt = `Please do a thorough code review of this module: security, bugs, performance, and propose a fixed version.\n\n\`\`\`js${REVIEW_CODE.repeat(6)}\`\`\``;
    const result = assess(ask(prompt));
    expect(result.tier).to.equal('heavy');
    expect(result.reasons).to.include('code');
  });

  it('routes a Chinese architecture brief to heavy, naming analysis and design', () => {
    const result = assess(
      ask('设计一个支持千万级日活的即时通讯系统架构，需要支持单聊、群聊、离线消息、多端同步和已读回执。请说明接入层、消息存储、推送和多端一致性的设计，对每个关键点比较两种以上方案，分析优缺点和权衡，最后给出推荐方案。'),
    );
    expect(result.tier).to.equal('heavy');
    expect(result.reasons).to.include.members(['analysis', 'design']);
  });

  it('picks thinking by itself for a proof, naming reasoning and math', () => {
    const proof = assess(ask(PROOF));
    expect(proof.tier).to.equal('thinking');
    expect(proof.reasons).to.include.members(['reasoning', 'math']);
    expect(assess(ask('证明：任意六个人中，一定有三个人互相认识或者互相不认识；并说明五个人时结论不一定成立。')).tier).to.equal('thinking');
  });

  it('forces thinking for an explicit thinking request, still reporting the score', () => {
    const result = assess(ask('hi', { thinking: { type: 'enabled', budgetTokens: 2048 } }));
    expect(result.tier).to.equal('thinking');
    expect(result.reasons[0]).to.equal('explicit_thinking');
    expect(result.score).to.be.below(DEFAULT_ASSESSMENT_THRESHOLDS.standard);
  });

  it('lets the assessment decide under adaptive thinking, and never thinks when thinking is disabled', () => {
    expect(assess(ask('hi', { thinking: { type: 'adaptive' } })).tier).to.equal('light');
    expect(assess({ ...ask(PROOF), thinking: { type: 'adaptive' } }).tier).to.equal('thinking');
    expect(assess({ ...ask(PROOF), thinking: { type: 'disabled' } }).tier).to.equal('heavy');
  });

  it('names what weighed, and never max_tokens or the tools', () => {
    const request = ask('Summarize where we are.', { maxTokens: 16_000, tools: [{ name: 'lookup_order', inputSchema: { type: 'object' } }] });
    const reasons = assessComplexity(request, { standard: 0.01, heavy: 0.99 }).reasons;
    expect(reasons.length).to.be.greaterThan(0);
    for (const tag of ['large_output', 'tools']) expect(reasons).not.to.include(tag);
  });

  describe('agent turns are routed by the latest ask, not by the bulk around it', () => {
    it('a one-fact ask inside a Claude Code turn (16 kB system prompt, 12 tools, memory reminder, three file reads) stays light', () => {
      expect(assess(agentTurn('what branch am I on?', { result: 'feature/reminders', rounds: 3 })).tier).to.equal('light');
    });

    it('the scaffold does not change the tier of an ask', () => {
      for (const prompt of ['what node version is installed here?', 'Explain the difference between TCP and UDP in a few paragraphs.', 'add a unit test for totalOf covering tax rounding']) {
        expect(assess(agentTurn(prompt, { rounds: 2 })).tier, prompt).to.equal(assess(ask(prompt)).tier);
      }
    });

    it('a big ask inside the same scaffold still goes to heavy', () => {
      const result = assess(agentTurn('review invoice-service.ts thoroughly: SQL injection, the async bugs, money rounding, caching, and fix all of it with tests', { rounds: 1 }));
      expect(result.tier).to.equal('heavy');
    });

    it('reads the task from the last user words when the last message is only tool results', () => {
      const request = ask('Write a SQL query that returns the top 5 customers by revenue.');
      request.messages.push(
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'schema', input: { table: 'orders' } }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [{ type: 'text', text: 'orders(id, customer_id, amount)\n'.repeat(400) }] }] },
      );
      expect(assess(request).tier).to.equal('standard');
    });

    it('ignores <system-reminder> blocks in the ask', () => {
      const reminder = `<system-reminder>\n${'Design the architecture, compare the trade-offs and prove the invariants. '.repeat(30)}\n</system-reminder>`;
      const messages: CanonicalMessage[] = [{ role: 'user', content: [{ type: 'text', text: reminder }, { type: 'text', text: 'thanks!' }] }];
      expect(assess({ ...ask(''), messages }).tier).to.equal('light');
    });
  });

  describe('agent turns in the bodies real harnesses send (test/fixtures/routing/harness/)', () => {
    /** An ask inside a harness's captured body: `rounds` earlier tool rounds, then the latest tool result. */
    const harnessTurn = (harness: Harness, prompt: string, agent: Omit<NonNullable<CorpusItem['agent']>, 'harness'> = {}, lang: 'en' | 'zh' = 'en'): CanonicalRequest =>
      toRequest({ id: `harness-${harness}`, lang, tier: 'light', domain: 'coding', kind: 'agent', reason: '-', prompt, agent: { harness, ...agent }, split: 'test' });

    it('decodes each capture with the decoder of its form: the harness system prompt, tools and output bound arrive with the ask', () => {
      const forms = { 'claude-code': 'messages', codex: 'responses', langchain: 'chat_completions' } as const;
      for (const harness of HARNESSES) {
        const request = harnessTurn(harness, 'what branch am I on?', { rounds: 2, result: 'main' });
        expect(request.source?.form, harness).to.equal(forms[harness]);
        expect(request.tools?.length, harness).to.be.greaterThan(0);
        expect(request.system?.length ?? 0, harness).to.be.greaterThan(50);
        // The ask, two file reads and the latest result: three tool rounds after the ask.
        expect(request.messages.filter((m) => m.content.some((b) => b.type === 'tool_result')).length, harness).to.equal(3);
      }
      expect(harnessTurn('claude-code', 'hi').maxTokens).to.be.greaterThan(4096);
      expect(harnessTurn('claude-code', 'hi').thinking?.type).to.equal('adaptive');
    });

    it('reads the ask without what the harness wraps around it: reminders, the AGENTS.md and environment blocks, the system turn', () => {
      for (const harness of HARNESSES) {
        const request = harnessTurn(harness, 'commit it', { rounds: 1, result: 'M src/app.ts' });
        const conversation = readConversation(request.messages);
        expect(conversation.task, harness).to.equal('commit it');
        expect(conversation.historyChars, harness).to.equal(0);
        expect(conversation.toolRounds, harness).to.equal(2);
      }
      // Codex sends its preambles as text in the same user turn as the ask.
      const codex = harnessTurn('codex', 'commit it');
      const words = JSON.stringify(codex.messages.at(-1)?.content);
      expect(words).to.contain('# AGENTS.md instructions for').and.to.contain('<environment_context>');
    });

    it('knows when the last tool failed, in each harness\'s way of saying so', () => {
      for (const harness of HARNESSES) {
        const failed = readConversation(harnessTurn(harness, 'run the tests', { rounds: 1, result: 'npm ERR! Missing script: "tset"', failed: true }).messages);
        const passed = readConversation(harnessTurn(harness, 'run the tests', { rounds: 1, result: '42 passing' }).messages);
        expect([failed.toolLoop, failed.toolFailed], harness).to.deep.equal([true, true]);
        expect([passed.toolLoop, passed.toolFailed], harness).to.deep.equal([true, false]);
      }
    });

    it('routes the short asks of the issue light in every harness, after a tool loop too', () => {
      const asks: Array<[string, 'en' | 'zh']> = [
        ['commit it', 'en'],
        ['thx. how many TODO comments are left under app/?', 'en'],
        ['does COALESCE work in MySQL too?', 'en'],
        ["把'对账单'翻成英文", 'zh'],
      ];
      for (const harness of HARNESSES) {
        for (const [prompt, lang] of asks) {
          for (const agent of [{}, { rounds: 3, result: 'done' }]) {
            expect(assess(harnessTurn(harness, prompt, agent, lang)).tier, `${harness}: ${prompt}`).to.equal('light');
          }
        }
      }
    });

    it('keeps a one-section edit below heavy and a multi-file refactor heavy, in every harness', () => {
      for (const harness of HARNESSES) {
        expect(assess(harnessTurn(harness, "把 README 里'安装'那一节改成用 uv 安装", { rounds: 2, result: '## 安装\npip install -r requirements.txt' }, 'zh')).tier, harness).to.be.oneOf(['light', 'standard']);
        const refactor = 'Refactor the billing module into a repository layer: move all SQL out of InvoiceService, ReminderJob and the export code, add interfaces, and update every test.';
        expect(assess(harnessTurn(harness, refactor, { rounds: 1 })).tier, harness).to.equal('heavy');
      }
    });

    it('gives harness constants no weight: max_tokens, the tool count, the system prompt beside tools, thinking: adaptive', () => {
      const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' } }));
      for (const prompt of ['what branch am I on?', 'add a unit test for totalOf covering tax rounding', 'Design the multi-region failover for the billing database, with the trade-offs.']) {
        const plain = assess(ask(prompt, { tools: tools(1) }));
        const harnessed = assess(ask(prompt, { tools: tools(40), maxTokens: 128_000, system: 'You are a coding agent. '.repeat(2000), thinking: { type: 'adaptive' } }));
        expect(harnessed, prompt).to.deep.equal(plain);
      }
    });

    it('composes a capture back into the first body it recorded when nothing is added', () => {
      for (const harness of HARNESSES) {
        const capture = harnessCapture(harness);
        const body = harnessBody(capture, { history: [], ask: '{{ask}}', rounds: [] });
        expect(body, harness).to.deep.equal(capture.body);
      }
    });
  });

  describe('a follow-up that approves or continues takes the tier of the work it carries on', () => {
    const REFACTOR = 'Refactor the billing module into a repository layer: move all SQL out of InvoiceService, ReminderJob and the export code, add interfaces, and update the tests.';
    const PLAN = 'Plan: 1. an InvoiceRepository interface and a pg implementation; 2. move the queries; 3. the export; 4. in-memory repository for the tests. Shall I start?';
    const session = (prompt: string, history: Array<[string, string]>, agent?: CorpusItem['agent']): CanonicalRequest =>
      toRequest({ id: 'follow-up-test', lang: 'en', tier: 'light', domain: 'coding', kind: 'agent', reason: '', prompt, history, ...(agent ? { agent } : {}), split: 'test' });

    it('"yes, go ahead" after a multi-file refactor plan in a Claude Code session is heavy, and says follow_up', () => {
      const result = assess(session('yes, go ahead', [[REFACTOR, PLAN]], {}));
      expect(result.tier).to.equal('heavy');
      expect(result.reasons[0]).to.equal('follow_up');
    });

    it('"继续" after a proof that was cut off is thinking', () => {
      expect(assess(session('继续', [['证明：√2是无理数，并推广到任意非完全平方数的平方根。', '假设√2是有理数，可写成既约分数 p/q，两边平方得 p² = 2q²，']])).tier).to.equal('thinking');
    });

    it('a closing thanks or a status question in the same session is judged on its own words: light', () => {
      for (const prompt of ["thanks, that's all for today", 'how many files are left?']) {
        const result = assess(session(prompt, [[REFACTOR, PLAN]], { rounds: 2 }));
        expect(result.tier, prompt).to.equal('light');
        expect(result.reasons, prompt).not.to.include('follow_up');
      }
    });
  });

  it('follows the thresholds it is given', () => {
    const request = ask('Explain the difference between TCP and UDP in a few paragraphs.');
    const { score } = assess(request);
    expect(assessComplexity(request, { standard: score + 0.01, heavy: 0.99 }).tier).to.equal('light');
    expect(assessComplexity(request, { standard: 0.01, heavy: score }).tier).to.be.oneOf(['heavy', 'thinking']);
  });

  it('reports a score between 0 and 1 with two decimals', () => {
    for (const text of ['', 'hi', REVIEW_CODE.repeat(50)]) {
      const { score } = assess(ask(text));
      expect(score).to.be.within(0, 1);
      expect(Math.round(score * 100) / 100).to.equal(score);
    }
  });

  describe('labelled corpus (test/fixtures/routing/corpus.jsonl)', () => {
    const corpus = loadCorpus();
    const test = corpus.filter((item) => item.split === 'test');
    const result = evaluate(test);

    it('has 600+ labelled items, about half Chinese, every tier, agent turns and multi-turn chats, each with a reason', () => {
      expect(corpus.length).to.be.at.least(600);
      const zh = corpus.filter((item) => item.lang === 'zh').length;
      expect(zh / corpus.length).to.be.within(0.45, 0.55);
      for (const tier of TIERS) expect(corpus.filter((item) => item.tier === tier).length, tier).to.be.at.least(100);
      expect(corpus.filter((item) => item.agent).length).to.be.at.least(40);
      expect(corpus.filter((item) => (item.turns ?? 0) > 0).length).to.be.at.least(20);
      for (const item of corpus) expect(item.reason.trim(), item.id).not.to.equal('');
    });

    it('is split once into train, dev and test, stratified by tier and language', () => {
      for (const tier of TIERS) {
        for (const lang of ['zh', 'en'] as const) {
          const group = corpus.filter((item) => item.tier === tier && item.lang === lang);
          const share = group.filter((item) => item.split === 'test').length / group.length;
          expect(share, `${tier}/${lang}`).to.be.within(0.1, 0.3);
        }
      }
    });

    // The targets of the routing issues, on the split no tuning reads (CI runs this).
    it('agrees exactly on 90% or more of the test split, and within one tier on 98% or more', () => {
      expect(result.exact).to.be.at.least(0.9);
      expect(result.withinOne).to.be.at.least(0.98);
    });

    it('sends 90% or more of the thinking items to thinking, and no light item there', () => {
      expect(result.thinkingRecall).to.be.at.least(0.9);
      expect(result.lightToThinking).to.equal(0);
    });

    it('agrees exactly on 85% or more of the agent turns of the test split', () => {
      expect(result.agent.all.count).to.be.greaterThan(0);
      expect(result.agent.all.exact).to.be.at.least(0.85);
    });

    it('routes at most 2% of the agent turns to heavy when their ask is light or standard', () => {
      const agents = evaluate(corpus.filter((item) => item.agent)).agent.all;
      expect(agents.overRouted / agents.count).to.be.at.most(0.02);
    });

    it('times the assessment per request (the bench reports it; here only that it measures)', () => {
      const timing = benchAssessment(test.slice(0, 5).map(toRequest), 5);
      expect(timing.p50).to.be.greaterThan(0);
      expect(timing.p95).to.be.at.least(timing.p50);
    });
  });

  it('keeps its explanations within the tags x-route documents', () => {
    const known = new Set(REASON_TAGS);
    for (const item of loadCorpus()) {
      const { reasons } = assess(toRequest(item));
      expect(reasons.length, item.id).to.be.at.most(5);
      for (const reason of reasons) expect(known.has(reason), `${item.id}: ${reason}`).to.equal(true);
    }
  });
});
