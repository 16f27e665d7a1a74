import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where the browser tests look for Chromium; nothing is ever downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SCREENSHOT_DIR = path.resolve('reports', 'screenshots');

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A real Chromium with a fresh profile. Without one this throws, so the browser tests fail
 * (never skip) and say how to get one.
 */
export async function launchBrowser(
  options: {
    colorScheme?: 'light' | 'dark';
    viewport?: { width: number; height: number };
    /** The zone and language the page's own clock and formats use. */
    timezoneId?: string;
    locale?: string;
  } = {},
): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}. The browser tests drive a real Chromium: install it with ` +
        '`sudo apt-get install -y chromium` (Debian/Ubuntu), or point CHROMIUM_PATH at a Chromium ' +
        'or Chrome binary.',
    );
  }
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    // The profile directory becomes --user-data-dir: a fresh one per launch.
    args: CHROMIUM_FLAGS,
    viewport: options.viewport ?? { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
    ...(options.locale ? { locale: options.locale } : {}),
    timeout: 120_000,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
