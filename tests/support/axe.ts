import AxeBuilder from '@axe-core/playwright'
import { expect, type Page } from '@playwright/test'
import { useColorScheme } from './browser'

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
export function controlsOutside(page: Page): Promise<string[]> {
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

export const a11yWidths = [390, 820, 1440] as const
export const a11ySchemes = ['dark', 'light'] as const

/**
 * The page as it is now (a dialog open stays open) in both colour schemes at the three widths:
 * what axe finds critical or serious, and controls pushed off the screen, one line each, named
 * after `where`. The page follows the system's scheme as it changes, so it is not reloaded.
 */
export async function problemsAtEveryWidth(page: Page, where: string): Promise<string[]> {
  const problems: string[] = []
  for (const scheme of a11ySchemes) {
    await useColorScheme(page, scheme)
    for (const width of a11yWidths) {
      await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
      await expect(page.locator('[aria-busy="true"]')).toHaveCount(0)
      const here = `${where} at ${width}px ${scheme}`
      for (const violation of await seriousViolations(axeOn(page))) {
        problems.push(`${here}: ${violation.id} (${violation.impact}) ${violation.nodes.slice(0, 3).map(node => node.target.join(' ')).join(', ')}`)
      }
      for (const control of await controlsOutside(page)) problems.push(`${here}: ${control} is outside the viewport`)
    }
  }
  return problems
}
