import AxeBuilder from '@axe-core/playwright'
import type { Page } from '@playwright/test'

type Violation = Awaited<ReturnType<AxeBuilder['analyze']>>['violations'][number]

/**
 * An axe-core check of the page, run in the page itself. By default the library runs axe in each
 * frame and then opens a blank page of its own to put the frames' results together, which took
 * twice as long as the check (1.2 to 1.7 s against 0.5 to 0.7 s on the login page, with the same
 * rules, violations, passes and incomplete results); legacy mode skips that page. The app's pages
 * have no frames from other origins, the one thing legacy mode does not check.
 */
export function axeOn(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode(true)
}

/** What the check finds that is critical or serious (the bar every page is held to). */
export async function seriousViolations(check: AxeBuilder): Promise<Violation[]> {
  const { violations } = await check.analyze()
  return violations.filter(violation => violation.impact === 'critical' || violation.impact === 'serious')
}
