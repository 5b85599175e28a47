// Takes the README's screenshot of the table (docs/table.png): the real
// server on a free port, headless Chromium, a table against bots, a few
// cards into the first hand.
//
//   cargo build -p spades-server && node tests/browser/screenshot.mjs

import path from 'node:path';
import { createFromLobby, fillBotsAndStart, launchBrowser, openPage, startStack } from './lib/harness.mjs';
import { REPO_ROOT } from './lib/server.mjs';

const OUT = path.join(REPO_ROOT, 'docs/table.png');

const stack = await startStack();
const browser = await launchBrowser();
try {
  const p = await openPage(browser, stack.url, { viewport: { width: 1280, height: 800 } });
  const { page } = p;
  await createFromLobby(page, { player: 'Ann', table: 'Friday night', options: { seat: 'south' } });
  await fillBotsAndStart(page);
  await page.waitForSelector('#bid-picker:not([hidden])', { timeout: 20000 });
  await page.click('.bid-btn[data-bid="4"]');
  await page.click('.bid-confirm');
  // Play until a trick is under way with the player on turn again.
  for (let played = 0; ; ) {
    await page.waitForSelector('.hand.my-turn .card.legal', { timeout: 20000 });
    const onTable = await page.locator('.trick-box .card').count();
    if (played >= 2 && onTable >= 2) break;
    await page.click('.hand.my-turn .card.legal');
    played += 1;
    await page.waitForFunction((n) => document.querySelectorAll('#hand .card').length === 13 - n, played);
  }
  await page.waitForTimeout(400);
  await page.screenshot({ path: OUT });
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
  await p.close();
} finally {
  await browser.close();
  await stack.stop();
}
