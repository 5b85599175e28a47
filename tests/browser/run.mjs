// The browser test suite: real headless Chromium against the real server.
//
//   cargo build -p spades-server
//   cd tests/browser && npm ci && npm test       (or: node tests/browser/run.mjs)
//
// SPADES_SERVER_BIN   the server binary (default target/debug/spades-server)
// CHROMIUM_PATH       the browser (default /usr/bin/chromium)
// SPADES_TEST_WEB_DIR serve web/ from this directory instead of the binary's
//                     embedded copy (client development without rebuilding)
//
// Screenshots go to tests/browser/artifacts/ (git-ignored).
//
// The protocol 2 tests of the client without a browser (lean.test.mjs: change
// frames against the server's fixture, the view keeper) run first, outside
// the browser suite.

import path from 'node:path';
import { after, before, describe } from 'node:test';
import { leanTests } from './lean.test.mjs';
import { ARTIFACTS, launchBrowser, startStack } from './lib/harness.mjs';
import { a11yTests } from './tests/a11y.test.mjs';
import { accountTests } from './tests/accounts.test.mjs';
import { passkeyTests } from './tests/passkeys.test.mjs';
import { passwordTests } from './tests/passwords.test.mjs';
import { oidcTests } from './tests/oidc.test.mjs';
import { alertTests } from './tests/alerts.test.mjs';
import { assetTests } from './tests/assets.test.mjs';
import { fairTests } from './tests/fair.test.mjs';
import { firstLoadTests } from './tests/firstload.test.mjs';
import { friendTests } from './tests/friends.test.mjs';
import { chatTests } from './tests/chat.test.mjs';
import { defenceTests } from './tests/defences.test.mjs';
import { historyTests } from './tests/history.test.mjs';
import { layoutTests } from './tests/layout.test.mjs';
import { lobbyTests } from './tests/lobby.test.mjs';
import { moderationTests } from './tests/moderation.test.mjs';
import { looksTests } from './tests/looks.test.mjs';
import { playTests } from './tests/play.test.mjs';
import { PRESENCE_ENV, presenceTests } from './tests/presence.test.mjs';
import { rematchTests } from './tests/rematch.test.mjs';
import { restartTests } from './tests/restart.test.mjs';
import { stallTests } from './tests/stall.test.mjs';
import { timeoutTests } from './tests/timeouts.test.mjs';
import { tutorialTests } from './tests/tutorial.test.mjs';

const suite = { browser: null, stack: null, fastStack: null };

async function stopAll() {
  await suite.browser?.close().catch(() => {});
  await suite.stack?.stop().catch(() => {});
  await suite.fastStack?.stop().catch(() => {});
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    stopAll().finally(() => process.exit(130));
  });
}

leanTests();

describe('Spades web client in Chromium', { timeout: 600_000 }, () => {
  before(async () => {
    [suite.stack, suite.fastStack, suite.browser] = await Promise.all([
      startStack(),
      startStack(PRESENCE_ENV),
      launchBrowser(),
    ]);
  });

  after(async () => {
    await stopAll();
    console.log(`screenshots: ${path.relative(process.cwd(), ARTIFACTS) || ARTIFACTS}`);
  });

  assetTests(suite);
  firstLoadTests(suite);
  lobbyTests(suite);
  accountTests(suite);
  passkeyTests(suite);
  passwordTests(suite);
  oidcTests(suite);
  moderationTests(suite);
  playTests(suite);
  presenceTests(suite);
  timeoutTests(suite);
  fairTests(suite);
  layoutTests(suite);
  a11yTests(suite);
  alertTests(suite);
  historyTests(suite);
  chatTests(suite);
  rematchTests(suite);
  restartTests(suite);
  stallTests(suite);
  friendTests(suite);
  looksTests(suite);
  defenceTests(suite);
  tutorialTests(suite);
});
