import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes each test file's whole time to the JSON file named by HANGAR_TEST_TIMINGS, for
 * the table `npm test` prints (scripts/test.mjs). Vitest's own JSON report times only the
 * tests themselves; a file's time here adds its import, its set-up files and its
 * beforeAll/afterAll hooks, where integration files spend most of theirs (a server, a
 * runtime, a model).
 */
export default class TimingsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const file = process.env.HANGAR_TEST_TIMINGS;
    if (!file) return;
    const rows = testModules.map((m) => {
      const d = m.diagnostic();
      const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
      return { file: m.relativeModuleId, project: m.project.name, seconds: ms / 1000, state: m.state() };
    });
    writeFileSync(file, `${JSON.stringify(rows, null, 1)}\n`);
  }
}
