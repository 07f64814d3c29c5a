import type { TableColumn } from '@nuxt/ui'

/** A column shown from the `md` breakpoint on: less important data that phones leave out. */
export function wideOnly<T>(column: TableColumn<T>): TableColumn<T> {
  return { ...column, meta: { class: { th: 'hidden md:table-cell', td: 'hidden md:table-cell' } } }
}

/** The last column of a table, for its row menu (an unlabelled header named for screen readers). */
export function actionsColumn<T>(): TableColumn<T> {
  return { id: 'actions', header: () => h('span', { class: 'sr-only' }, 'Actions'), meta: { class: { td: 'w-0 text-right' } } }
}
