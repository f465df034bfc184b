// The spec reporter, closed by one plain line that CI tooling reads whatever
// the test runner: "N passed, N failed, N skipped", alone on its line.
// .ci/run repeats it from test-results/junit.xml as its own last line.
// The same results are written as JUnit XML to test-results/junit.xml, the
// file CI systems collect test results from.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Mocha from 'mocha';

const { EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

interface Case {
  suite: string;
  name: string;
  seconds: number;
  outcome: 'passed' | 'failed' | 'skipped';
  message?: string;
}

const xml = (text: string): string =>
  text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!).replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/g, '');

function junit(cases: readonly Case[], seconds: number): string {
  const failures = cases.filter((c) => c.outcome === 'failed').length;
  const skipped = cases.filter((c) => c.outcome === 'skipped').length;
  const rows = cases.map((c) => {
    const open = `    <testcase classname="${xml(c.suite)}" name="${xml(c.name)}" time="${c.seconds.toFixed(3)}"`;
    if (c.outcome === 'passed') return `${open}/>`;
    if (c.outcome === 'skipped') return `${open}><skipped/></testcase>`;
    return `${open}><failure message="${xml(c.message ?? '')}"/></testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites tests="${cases.length}" failures="${failures}" skipped="${skipped}" time="${seconds.toFixed(3)}">`,
    `  <testsuite name="tsxt-gateway" tests="${cases.length}" failures="${failures}" skipped="${skipped}" time="${seconds.toFixed(3)}">`,
    ...rows,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const cases: Case[] = [];
    const started = Date.now();
    const record = (test: Mocha.Test, outcome: Case['outcome'], error?: Error): void => {
      cases.push({
        suite: test.parent?.fullTitle() ?? '',
        name: test.title,
        seconds: (test.duration ?? 0) / 1000,
        outcome,
        ...(error ? { message: error.message } : {}),
      });
    };
    runner.on(EVENT_TEST_PASS, (test: Mocha.Test) => record(test, 'passed'));
    runner.on(EVENT_TEST_FAIL, (test: Mocha.Test, error: Error) => record(test, 'failed', error));
    runner.on(EVENT_TEST_PENDING, (test: Mocha.Test) => record(test, 'skipped'));
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      try {
        const dir = path.resolve('test-results');
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, 'junit.xml'), junit(cases, (Date.now() - started) / 1000));
      } catch {
        // A read-only checkout still gets the summary line.
      }
      process.stdout.write(`\n${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

export = SummaryReporter;
