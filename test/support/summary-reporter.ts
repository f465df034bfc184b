// The spec reporter, closed by one plain line that CI tooling reads whatever
// the test runner: "tests: N passed, N failed, N skipped".
import Mocha from 'mocha';

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`\ntests: ${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

export = SummaryReporter;
