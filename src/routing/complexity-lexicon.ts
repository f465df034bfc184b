// The cue words of the complexity assessment, in English and Chinese, grouped
// by what they say about the work asked for. A group is one named feature of
// the learned model (complexity-features.ts): the model learns how much each
// group weighs toward each tier, so a word list only has to say what a word
// *is* (a lookup, a request to produce, a demand for proof…), never how hard
// it makes a request.
//
// The lists are written from how people phrase requests in general, not from
// the corpus the weights are trained on: a word belongs here when it carries
// its group's meaning in most requests that use it. Words that are
// everywhere ("the", "可以", "一定") or mean different things in different
// requests ("行" in 银行 and 可行) are left out.
//
// English: `|`-separated, lower case, matched at word starts; a trailing `*`
// matches any ending ("analy*": analyse, analysis, analyzing), otherwise the
// word must end there. Curly apostrophes are read as straight ones.
// Chinese: `|`-separated substrings (Chinese has no spaces).

export const CUE_GROUPS = [
  'lookup',
  'chat',
  'produce',
  'artefact',
  'explain',
  'code',
  'edit',
  'analysis',
  'design',
  'breadth',
  'reasoning',
  'optimise',
  'math',
  'arithmetic',
  'constraints',
  'show_work',
  'proceed',
  'deliberate',
  'phrase',
] as const;
export type CueGroupName = (typeof CUE_GROUPS)[number];

export const LEXICON: Record<CueGroupName, { en: string; zh: string }> = {
  /** Asking for one fact, value, word or command. */
  lookup: {
    en: "what is|what's|whats|what are|what was|what were|what does|what do|what time|what day|what year|which|who|who's|whom|whose|when|where|where's|how many|how much|how long|how old|how far|how big|is it|is there|are there|is this|does it|do i need|can i|am i|did it|did the|define|definition|meaning|mean|stand for|stands for|short for|spell*|synonym*|antonym*|abbreviation|acronym|plural|capital of|population|exchange rate|zip code|postcode|phone number|address|version|default|shortcut|hotkey|command|syntax for|show me|list the|print|tell me|remind me|look up|lookup|check whether|status|in celsius|in fahrenheit|in km|in miles|in cm|in inches|to usd|to eur|to cny",
    zh: '是什么|是多少|多少|几个|几天|几点|几号|几年|几岁|哪个|哪些|哪里|哪儿|哪天|哪一|哪位|谁|什么时候|何时|是不是|是否|有没有|能不能|可不可以|对不对|怎么说|怎么读|怎么写|全称|缩写|简称|意思|含义|等于|换算|汇率|税率|版本|命令|快捷键|在哪|查一下|查查|看一下|看看|告诉我|列出|显示',
  },
  /** Greetings, thanks and acknowledgements. */
  chat: {
    en: "hi|hello|hey|thanks|thank you|thx|cheers|ok|okay|great|perfect|cool|nice|awesome|sounds good|got it|makes sense|go ahead|good morning|good night|good evening|bye|see you|no worries|sure|yes|yep|yeah|nope|no thanks|that's it|that's all|for now|all good|never mind|nvm|lol|haha|welcome|how are you",
    zh: '你好|您好|谢谢|多谢|感谢|好的|好滴|好嘞|收到|明白|了解|没问题|辛苦|再见|拜拜|晚安|早上好|早安|午安|哈哈|嗯嗯|对的|就这样|先这样|不用了|挺好|太好了|不客气|在吗|麻烦了',
  },
  /** Asking for something to be produced: written, rewritten, translated, summarised. */
  produce: {
    en: 'write|rewrite|draft|redraft|compose|create|generate|make|prepare|put together|produce|turn this|turn it|turn that|turn what|turn these|put that into|put this into|put it into|put these into|translate*|summari*|sum up|outline|come up with|suggest|brainstorm|fill in|format|reformat|polish|proofread|rephrase|reword|shorten|condense|expand|paraphrase|tidy up|clean up the wording|convert this|convert it|extract|pull out|tabulate|put into a table|give me|send me|need a|need an',
    zh: '写|起草|拟一|拟个|草拟|撰写|生成|做一份|做个|做一个|出一份|整理|改写|重写|润色|翻译|翻成|译成|总结|概括|归纳|提炼|摘要|列一|列个|列出|提取|抽取|填写|格式化|改得|改成更|缩短|精简|扩写|想几个|起个|取个',
  },
  /** Short, routine pieces of writing. */
  artefact: {
    en: 'email|e-mail|mail|letter|message|note|post|tweet|caption|announcement|notice|reply|response|invitation|invite|reminder|agenda|minutes|memo|bullet*|paragraph|sentence|slogan|tagline|headline|title|subject line|bio|faq|description|summary|thank-you|apology|out-of-office|status update|update|cover letter|toast|greeting|comment|docstring|readme|changelog|commit message|release note*',
    zh: '邮件|一封信|回信|通知|公告|回复|消息|短信|文案|标题|口号|标语|段落|一句话|一段话|简介|介绍信|邀请|邀请函|提醒|会议纪要|纪要|议程|备忘|感谢信|道歉|请假条|周报|日报|朋友圈|帖子|评论|注释|说明文字|祝福',
  },
  /** Asking for an explanation of one thing. */
  explain: {
    en: "explain*|describe|clarify|walk me through|tell me about|teach me|help me understand|how does|how do|how is|how are|how can|how should|how would|how to|why does|why do|why is|why are|why did|why would|difference between|differ*|different from|compared to|versus|vs|in plain|in simple|simply put|intuition|intuitively|overview|example*|for instance|what happens when|what happens if|causes of|cause of|reasons for|reasons why|main reasons|eli5|the idea behind|concept",
    zh: '解释|讲讲|讲一下|讲解|说说|说一下|介绍|说明|为什么|为啥|怎么理解|区别|不同|差别|差异|原理|是怎么|如何|怎么|怎样|举例|例子|举个|通俗|简单说|简单讲|入门|概念|含义是',
  },
  /** Code to read or write, and the vocabulary of software work. */
  code: {
    en: 'code|coding|codebase|function*|method*|class|classes|module*|script*|regex*|regular expression*|query|queries|sql|api*|endpoint*|bug*|compile*|compiler|unit test*|tests|test suite|test case*|stack trace|traceback|error*|exception*|typeerror|null pointer|undefined|segfault|deadlock*|race condition*|python|javascript|typescript|java|golang|rust|c++|c#|bash|shell|powershell|react|vue|node|nodejs|npm|kotlin|swift|solidity|terraform|docker*|kubernetes|k8s|helm|git|branch*|commit*|merge|rebase|pull request|lint*|eslint|build|deploy*|ci|json|yaml|csv|html|css|database*|schema*|column*|index|indexes|migration*|repo|repository|handler*|middleware|microservice*|backend|frontend|cache|caching|redis|postgres*|mysql|mongodb|kafka|graphql|grpc|rest|http|webhook*|cron|lambda|vba|macro*|pandas|numpy|jest|mocha|pytest|orm|concurren*|thread*|async|await|promise*|callback*|variable*|parameter*|argument*|library|package|dependenc*',
    zh: '代码|函数|方法名|查询|查出|表结构|脚本|正则|报错|错误信息|异常|编译|单元测试|测试用例|用例|接口|编程|程序|数据库|字段|索引|部署|构建|分支|提交|仓库|模块|前端|后端|缓存|中间件|日志|并发|线程|死锁|变量|参数|依赖|库表|建表|存储过程|微服务|重构|调试|bug',
  },
  /** Changing something that exists: fix, add, rename, migrate. */
  edit: {
    en: "fix*|add|adds|adding|remove|delete|rename|update|upgrade|bump|change|replace|move|implement*|refactor*|migrate|port|debug*|patch|clean up|cleanup|wire up|hook up|set up|configure|revert|undo|split|merge these|convert|rewrite|tweak|adjust|modify|make it|make sure|get rid of|swap|switch to|support for",
    zh: '修复|修一下|修好|修掉|修改|改成|改为|改一下|改掉|改下|加上|加个|加一个|添加|增加|删除|删掉|去掉|重命名|替换|更新|升级|实现|重构|迁移|补上|补一个|补个|补充|调整|配置|换成|拆分|合并|统一',
  },
  /** Asking to judge: review, assess, diagnose, weigh, recommend. */
  analysis: {
    en: "analy*|assess*|evaluat*|review*|audit*|diagnos*|root cause|investigat*|what went wrong|what happened|what actually happened|risk*|recommend*|advise|advice|critique|critici*|pros and cons|trade-off*|tradeoff*|trade off|weigh|compare|comparing|comparison|benchmark*|prioriti*|decide|decision*|should we|which option|push back|red flag*|weakness*|strength*|gaps|implication*|impact|forecast*|insight*|attribution|break down|breakdown|drivers|bottleneck*|what could go wrong|due diligence|sanity check|feedback on|tear this apart|find the bug*|why it fails|why it's slow|security",
    zh: '分析|评估|评价|审查|审阅|审核|检查|诊断|根因|根本原因|排查|定位问题|风险|建议|意见|利弊|优缺点|优劣|权衡|取舍|比较|对比|选型|决策|判断|优先级|影响|预测|洞察|归因|拆解|拆到|瓶颈|不利|漏洞|隐患|问题在哪|哪里有问题|为什么会|尽职调查|复盘|竞品',
  },
  /** Asking for a design, a plan, a strategy or a structure. */
  design: {
    en: "design*|redesign*|architect*|plan|plans|planning|roadmap|strategy|strategies|strategic|framework|model|modelling|modeling|system|systems|structure|restructur*|organisation*|organization*|blueprint|proposal|propose|playbook|policy|policies|process|workflow*|rollout|roll out|cut-over|cutover|phase*|milestone*|end-to-end|scal*|high availability|reliab*|consisten*|fault toleran*|multi-tenant|multi-region|infrastructure|pipeline*|go-to-market|pricing|budget*|compensation|commission|territor*|hiring|headcount|operating model|governance|curriculum|program|programme|launch|migration plan|data model|schema design|contracts|interfaces|separate services|service boundaries",
    zh: '设计|架构|方案|规划|计划|战略|策略|框架|体系|模型|系统|流程|机制|迁移|切换|上线|阶段|里程碑|路线图|高可用|扩展性|一致性|容灾|多租户|组织|汇报关系|定价|预算|薪酬|激励|佣金|治理|落地|实施|拆分成|数据模型|制度|大纲|课程',
  },
  /** Asking to cover many parts, or all of something. */
  breadth: {
    en: "every|all|whole|entire|entirely|across|each|comprehensive*|thorough*|complete|completely|full|fully|in detail|detailed|in depth|in-depth|end to end|clause by clause|line by line|item by item|point by point|one by one|everything|everywhere|all of|both|multiple|several|various|many|company-wide|org-wide|repo-wide|project-wide|codebase-wide|all the|each of|as well as|along with|and also|plus",
    zh: '每个|每条|每一|所有|全部|整个|全面|完整|详细|系统地|系统性|逐条|逐项|逐个|逐一|各个|各方面|方方面面|几个方面|几个维度|维度|全公司|全项目|全流程|各处|到处|以及|同时还|分别',
  },
  /** Asking for exact reasoning: proof, derivation, a solved puzzle. */
  reasoning: {
    en: "prove*|proof*|proving|disprove*|show that|show rigorously|rigorous*|formally|formal proof|derive*|derivation*|deduce*|deduction|justify*|justification|counterexample*|counter-example*|why can't|why cannot|why it can't|can't be beaten|cannot be beaten|nothing beats|nothing shorter|nothing better|no shorter|no better|no smaller|no cheaper|impossible|possible or not|for all|for every|for any|if and only if|iff|necessary and sufficient|contradiction|induction|lemma*|theorem*|invariant*|correctness|terminat*|puzzle*|riddle*|logic puzzle|logical|valid or not|is it valid|validity|syllogism|paradox|knight*|knave*|liar*|truth-teller*|truthful|who is lying|who's lying|guarantee*|always works|in all cases|every case|each case|case analysis",
    zh: '证明|求证|推导|推出|论证|严格|反例|充要|充分必要|当且仅当|矛盾|归纳法|引理|定理|不变量|正确性|可行性|谜题|推理|逻辑|说谎|说真话|说假话|真话|假话|悖论|不可能|所有情况|每种情况|各种情况|任意|恒成立|为什么不能|不存在',
  },
  /** Optimisation, scheduling and algorithmic wording. */
  optimise: {
    en: 'optimal*|optimum|optimi*|minimi*|maximi*|minimum|maximum|minimal|maximal|min|max|shortest|longest|cheapest|fastest|best possible|lowest|highest|smallest|largest|fewest|makespan|schedul*|allocat*|assign*|knapsack|linear program*|integer program*|dynamic programming|np-hard|np-complete|greedy|time complexity|space complexity|complexity|o(n*|o(log*|o(1)|o(m*|o(k*|o(v*|o(e*|big-o|algorithm*|efficient*|in polynomial time|in linear time|route|routing|shortest path|spanning tree|matching|flow',
    zh: '最优|最佳|最小|最大|最少|最多|最低|最高|最短|最长|最省|最便宜|最快|极值|优化|线性规划|整数规划|动态规划|贪心|排班|排程|调度|分配|指派|背包|复杂度|算法|路径|调运|最划算',
  },
  /** Mathematical notation aside, the vocabulary of mathematics. */
  math: {
    en: 'equation*|inequalit*|integral*|integrat*|derivative*|differentiat*|polynomial*|recurrence*|closed form|closed-form|divisib*|divides|prime*|irrational|rational number*|modulo|mod|gcd|lcm|matrix|matrices|eigen*|vector*|limit|series|converge*|convergence|probabilit*|chance that|chance of|the chance|the odds|dice|coin flip*|coin toss*|expected value|expected number|expectation|variance|standard deviation|odds|random*|combinatori*|permutation*|combination*|how many ways|sequence*|vertex|vertices|graph theory|planar|colorable|colourable|geometry|triangle*|angle*|radius|volume|parabola|logarithm*|exponential|asymptotic|real number*|integer*|natural number*|positive integer*|sqrt|pi',
    zh: '积分|导数|微分|求导|方程|不等式|素数|质数|无理数|有理数|整除|余数|同余|概率|期望|方差|标准差|级数|数列|收敛|极限|矩阵|向量|特征值|多项式|实根|函数方程|排列|组合数|几何|三角形|面积|体积|半径|递推|通项|图论|顶点|连通|正整数|整数|实数|对数|指数函数|偏导|微积分',
  },
  /** Everyday arithmetic: a figure to work out. */
  arithmetic: {
    en: 'calculate|calculation|compute|work out|how much is|percent*|percentage|interest|compound|total|sum|average|mean of|growth rate|discount|after tax|before tax|vat|margin|markup|roi|payback|npv|irr|per month|per year|monthly|annual*|instal*ment*|amorti*|loan|mortgage|payment*|rate of return',
    zh: '计算|算一下|算算|算出|等于多少|百分之|百分比|利息|利率|复利|合计|总计|平均|增长率|折扣|税后|税前|毛利|利润率|回报率|月供|贷款|分期|年化|本金',
  },
  /** Hard constraints a solution must meet. */
  constraints: {
    en: "must|must not|mustn't|cannot|can't|can not|may not|not allowed|no two|exactly|at most|at least|no more than|no less than|not more than|not less than|unless|subject to|constraint*|exactly once|at the same time|simultaneously|adjacent|consecutive|in a row|only if|only on|only be|only one|neither|together|conflict*|must finish|before it starts|can't run|cannot run|capacity|at a time",
    zh: '必须|不能|不可以|不得|只能|恰好|正好|至多|至少|最多不|不超过|不少于|不低于|不高于|约束|限制|同时|相邻|连续|除非|不在|只有|仅能|恰好一次|每人|每天最多|每周最多|容量|冲突',
  },
  /** Asking for the working to be shown. */
  show_work: {
    en: "show the working|show your working|show the work|show your work|show all work|show the steps|show the derivation|show the calculation|show how|step by step|step-by-step|each step|every step|work it out|walk through the|full reasoning|explain your reasoning|with reasoning|your reasoning|complete solution|full solution|detailed solution|complete argument|full argument|argue why|argue that|explain why it|why it's correct|why it is correct|why it works",
    zh: '过程|步骤|每一步|一步一步|一步步|推理过程|解题过程|完整推理|详细推导|写出来|写清楚|说明理由|给出理由|说明为什么|为什么是|为什么它|讲清楚|论证过程|演算',
  },
  /** A follow-up that approves or continues the work already under way. */
  proceed: {
    en: "go ahead|go on|continue|lgtm|ship it|make it so|let's go|keep going|carry on|proceed|do it|do that|yes please|please do|go for it|the rest|rest of|resume|finish it|finish the|write it up|start|let's do it|the same for|same for|same in|same thing|next one|the others|the other|too|as well",
    zh: '继续|开始吧|开始|开干|干吧|搞起来|做吧|弄吧|接着|往下|剩下的|其余的|动手|执行吧|照这个|按这个|就这么办|也加|也改|也都|再用|再写|展开|写完整|同样|一样的',
  },
  /**
   * Reasoning that must be deliberated step by step: the exact order of
   * concurrent events, a counter-example, rules applied to a case condition by
   * condition, a timetable or assignment that satisfies every constraint.
   */
  deliberate: {
    en: "interleaving*|interleave*|exact order|exact sequence|in what order|which order|every possible order|possible orderings|order of events|trace through|step through|race condition*|data race*|deadlock*|livelock*|lost update*|double-charg*|double charg*|double-send*|double send*|happens-before|linearizab*|serializab*|counterexample*|counter-example*|breaking input|satisfies|satisfy all|satisfy every|satisfying all|all conditions|all the conditions|every condition|each condition|conditions are met|which rule applies|which clause applies|which provision applies|does it apply|eligible|eligibility|entitled to|qualify for|qualifies for|exempt|exemption|feasible|infeasible|feasibility|timetable*|seating plan|rota|roster|without overlap*|no overlap*|valid assignment|every constraint|all constraints|all the constraints",
    zh: '交错|交替执行|执行顺序|先后顺序|时序|竞态|竞争条件|死锁|活锁|丢失更新|重复扣款|重复扣费|重复发送|并发下|可线性化|可串行化|反例|同时满足|满足所有|所有条件|各项条件|全部条件|是否符合|符合条件|是否满足|满足条件|适用哪|是否适用|是否构成|能否主张|能否获得|有没有资格|有资格|可行解|无解|排课|排座|值班表|互不冲突|所有约束|全部约束',
  },
  /** Asking for a word, a phrase or a one-line command: a term in another language, the command or shortcut for something. */
  phrase: {
    en: "how do you say|how do i say|how to say|how would you say|what's the word for|what is the word for|the word for|term for|in chinese|in english|in french|in german|in japanese|in spanish|into chinese|into english|into french|into german|into japanese|into spanish|english for|chinese for|one-liner|one liner|one-line|one line|shell command|command to|command for|flag for|keyboard shortcut|shortcut for|shortcut to|how do i check|how do i see|how do i list|how do i find|how do i get|how do i undo|how do i revert|how do i install|how do i uninstall|how do i delete|how do i rename|how do i print|how do i show|how do i turn|how do i kill|how do i stop|how do i push|how do i exit|how do i quit|how can i check|how can i see|how can i list",
    zh: '怎么说|用英文|用中文|英文怎么|中文怎么|英语怎么|翻成|译成|英文是|中文是|英文叫|中文叫|一行命令|一条命令|用什么命令|哪个命令|什么命令|快捷键|一行代码|怎么查|怎么看|怎么查看|怎么列出|怎么安装|怎么卸载|怎么删|怎么撤销|怎么回滚|怎么退出|怎么杀掉|怎么推|只看|用哪个参数|什么参数',
  },
};
