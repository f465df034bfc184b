// The spec reporter, closed by one plain line that CI tooling reads whatever
// the test runner: "tests: N passed, N failed, N skipped". The line goes to
// both stdout and stderr, so it closes the run's output even where the two
// streams are captured apart and read one after the other (stderr carries
// npm's and the spawned gateways' warnings, which would otherwise come last).
import Mocha from 'mocha';

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      const line = `tests: ${passes} passed, ${failures} failed, ${pending} skipped`;
      process.stdout.write(`\n${line}\n`);
      process.stderr.write(`${line}\n`);
    });
  }
}

export = SummaryReporter;
