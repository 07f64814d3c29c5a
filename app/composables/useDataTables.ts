import type { DataTable } from '#shared/types/data'

/** The current team's domain tables the role may view (GET .../tables), shared by the sidebar and the data pages. */
export async function useDataTables() {
  const { currentTeam } = useWorkspace()
  const teamId = computed(() => currentTeam.value?.id)
  const answer = await useFetch<DataTable[]>(() => `/api/teams/${teamId.value}/tables`, {
    key: computed(() => dataTablesKey(teamId.value)),
    default: () => [],
    immediate: !!teamId.value,
    watch: [teamId],
  })
  return { ...answer, tables: answer.data, table: (name: string) => answer.data.value.find(table => table.name === name) }
}

const dataTablesKey = (teamId: string | undefined) => `data-tables:${teamId}`

/**
 * The tables useDataTables has loaded (the app shell loads them on every team page), without a
 * fetch of its own: for what a page shows many times, a table's cells, where a useFetch each (its
 * watchers, an async setup) made most of the page's hydration on a phone.
 */
export function useLoadedDataTables(): ComputedRef<DataTable[]> {
  const { currentTeam } = useWorkspace()
  const nuxtApp = useNuxtApp()
  // what useNuxtData reads, for the current team's key: a value that stays on screen through a
  // team switch reads the new team's tables, not the ones its key named when it was made
  return computed(() => {
    const key = dataTablesKey(currentTeam.value?.id)
    return (nuxtApp._asyncData[key]?.data.value ?? nuxtApp.payload.data[key] ?? []) as DataTable[]
  })
}
