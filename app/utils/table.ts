import type { DropdownMenuItem, TableColumn } from '@nuxt/ui'
import { AppRowMenu, AppTime, UButton } from '#components'

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

const srOnly = (text: string) => () => h('span', { class: 'sr-only' }, text)

/** The last column of a table: each row's actions in an AppRowMenu (`menu` gives its label and items), under an unlabelled header named for screen readers. */
export function actionsColumn<T>(menu: (row: T) => { label: string, items: DropdownMenuItem[] }): TableColumn<T> {
  return { id: 'actions', header: srOnly('Actions'), meta: { class: { td: 'w-0 text-right' } }, cell: ({ row }) => h(AppRowMenu, menu(row.original)) }
}

/** The last column of a table whose rows have a few actions as buttons (the `#actions-cell` slot), under an unlabelled header named for screen readers. */
export function buttonsColumn<T>(): TableColumn<T> {
  return { id: 'actions', header: srOnly('Actions'), meta: { class: { td: 'w-0 text-right' } } }
}

/** The first column of an expandable table: a button that shows or hides the row's `what` ("Changes": "Show changes"), the `#expanded` slot. */
export function expandColumn<T>(what: string): TableColumn<T> {
  const noun = what.toLowerCase()
  return {
    id: 'expand',
    header: srOnly(what),
    cell: ({ row }) => h(UButton, {
      'color': 'neutral',
      'variant': 'ghost',
      'size': 'sm',
      'icon': row.getIsExpanded() ? 'i-lucide-chevron-down' : 'i-lucide-chevron-right',
      'aria-label': `${row.getIsExpanded() ? 'Hide' : 'Show'} ${noun}`,
      'aria-expanded': row.getIsExpanded(),
      'onClick': () => row.toggleExpanded(),
    }),
  }
}

/** A column of moments, shown muted by AppTime, `fallback` where there is none. */
export function timeColumn<T>(column: TableColumn<T>, fallback?: string): TableColumn<T> {
  return { ...column, cell: ({ getValue }) => h(AppTime, { datetime: getValue() as string | null, fallback, class: 'text-muted' }) }
}

/** The `ui` of a table that fills a card: the cells' padding, a little tighter on phones. */
export const cardTableUi = { th: 'px-3 sm:px-4', td: 'px-3 py-3 sm:px-4' }

/** The `ui` of a card whose list or table reaches its edges: no padding of its own. */
export const flushCardUi = { container: 'p-0 sm:p-0 gap-y-0', wrapper: 'items-stretch' }
