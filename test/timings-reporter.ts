import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes each test file's whole time to the JSON file named by HANGAR_TEST_TIMINGS, for
 * the table `npm test` prints (scripts/test.mjs). Vitest's own JSON report times only the
 * tests themselves; a file's time here adds its import, its set-up files and its
 * beforeAll/afterAll hooks, where integration files spend most of theirs (a server, a
 * runtime, a model).
 *
 * Each row also names the file's failed tests with their first error line, so that the
 * table at the end of the run (the part of a CI log one sees first) says what failed.
 */
export default class TimingsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const file = process.env.HANGAR_TEST_TIMINGS;
    if (!file) return;
    const rows = testModules.map((m) => {
      const d = m.diagnostic();
      const ms = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
      const failed = [...m.children.allTests('failed')].map((t) => {
        const result = t.result();
        return { test: t.fullName, error: firstLine(result.state === 'failed' ? result.errors[0]?.message : undefined) };
      });
      // An error outside any test (an import, a hook) fails the file without a failed test.
      for (const e of m.errors()) failed.push({ test: '(the file itself)', error: firstLine(e.message) });
      return { file: m.relativeModuleId, project: m.project.name, seconds: ms / 1000, state: m.state(), failed };
    });
    writeFileSync(file, `${JSON.stringify(rows, null, 1)}\n`);
  }
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 300);
}
