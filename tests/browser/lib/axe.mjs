// axe-core in the page under test: its source is evaluated in the page
// (no network), then run on the whole document or one part of it.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The widest viewport the tests take for a phone (the client's own phone layout starts at 600 px). */
export const PHONE_WIDTH = 600;

/**
 * Runs axe-core on `selector` (default: the whole page) and returns the
 * violations, each `{id, impact, help, nodes}`. The label/content rule
 * (accessible names that do not match what is shown) is switched on too, and
 * on a phone's viewport (at most PHONE_WIDTH wide) the touch targets' rule
 * (`target-size`, WCAG 2.2 AA: 24 px, or room around), which axe leaves off.
 */
export async function axeViolations(page, selector = null) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(AXE_SOURCE);
  const phone = (page.viewportSize()?.width ?? Infinity) <= PHONE_WIDTH;
  return page.evaluate(async ({ sel, phone }) => {
    const context = sel ? document.querySelector(sel) : document;
    const result = await window.axe.run(context, {
      resultTypes: ['violations'],
      rules: { 'label-content-name-mismatch': { enabled: true }, 'target-size': { enabled: phone } },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
    }));
  }, { sel: selector, phone });
}

/** Fails when axe finds a serious or critical violation (names them all). */
export async function assertAccessible(assert, page, what, selector = null) {
  const violations = await axeViolations(page, selector);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${what}: serious or critical accessibility violations:\n${JSON.stringify(bad, null, 2)}`);
  return violations;
}
