import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';
import { repoRoot } from '../integration/harness/server.js';

/** Debian's Chromium (scripts/system-packages-test.txt); never a browser downloaded by a test tool. */
export const CHROMIUM = process.env.HANGAR_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Flags for a closed network (shared/env/offline-facts.md): without the
 * background-networking ones Chromium keeps trying to reach Google's hosts.
 */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'];

/** Screenshots of each page go here (gitignored), one folder per test file. */
export const screenshotDir = (name: string) => path.join(repoRoot, 'test-output', 'e2e', name);

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh, throw-away profile (--user-data-dir). */
export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'hangar-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Collects every console error and uncaught page error. A test names the failed
 * loads it provokes on purpose (a 401 on a bad login, a 403, a 400 from a bad form:
 * Chromium logs each as "Failed to load resource") with `expect`; `check` throws on
 * anything else and starts over.
 */
export class ConsoleWatch {
  private errors: string[] = [];
  private expected: Array<{ status: number; url: RegExp }> = [];

  constructor(page: Page) {
    page.on('console', (msg: ConsoleMessage) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      const url = msg.location().url;
      const status = Number(/status of (\d{3})/.exec(text)?.[1]);
      if (this.expected.some((e) => e.status === status && e.url.test(url))) return;
      this.errors.push(`${text} (${url})`);
    });
    page.on('pageerror', (err) => this.errors.push(`uncaught: ${err.message}`));
  }

  /** A failed load with this status from a URL matching `url` is expected until the next `check`. */
  expect(status: number, url: RegExp): void {
    this.expected.push({ status, url });
  }

  check(): void {
    const errors = this.errors;
    this.errors = [];
    this.expected = [];
    if (errors.length > 0) throw new Error(`console errors in the page:\n${errors.join('\n')}`);
  }
}

export async function screenshot(page: Page, dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
