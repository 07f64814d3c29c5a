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

/** Visible controls whose box reaches past the left or right edge of the viewport. */
export function controlsOutside(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    return [...document.querySelectorAll<HTMLElement>('button, a[href], input, select, textarea, [role="button"], [role="combobox"]')]
      .filter(element => element.checkVisibility({ visibilityProperty: true, opacityProperty: true }))
      .filter((element) => {
        const box = element.getBoundingClientRect()
        return box.width > 1 && box.height > 1 && (box.left < -1 || box.right > width + 1)
      })
      .map(element => `${element.tagName.toLowerCase()} "${(element.getAttribute('aria-label') ?? element.textContent ?? '').trim().slice(0, 40)}"`)
  })
}
