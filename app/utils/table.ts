import type { TableColumn } from '@nuxt/ui'

// whole class names, so that Tailwind finds them in the source
const fromBreakpoint = { md: 'hidden md:table-cell', lg: 'hidden lg:table-cell', xl: 'hidden xl:table-cell' } as const

/** The meta of a column shown from a breakpoint on. */
export function shownFrom(breakpoint: keyof typeof fromBreakpoint) {
  return { class: { th: fromBreakpoint[breakpoint], td: fromBreakpoint[breakpoint] } }
}

/** The meta of a column shown from the `md` breakpoint on. */
export const wideOnlyMeta = shownFrom('md')

/** A column shown from the `md` breakpoint on: less important data that phones leave out. */
export function wideOnly<T>(column: TableColumn<T>): TableColumn<T> {
  return { ...column, meta: wideOnlyMeta }
}

/** The last column of a table, for its row menu (an unlabelled header named for screen readers). */
export function actionsColumn<T>(): TableColumn<T> {
  return { id: 'actions', header: () => h('span', { class: 'sr-only' }, 'Actions'), meta: { class: { td: 'w-0 text-right' } } }
}
