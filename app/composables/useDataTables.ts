import type { DataTable } from '#shared/types/data'

/** The current team's domain tables the role may view (GET .../tables), shared by the sidebar and the data pages. */
export async function useDataTables() {
  const { currentTeam } = useWorkspace()
  const teamId = computed(() => currentTeam.value?.id)
  const answer = await useFetch<DataTable[]>(() => `/api/teams/${teamId.value}/tables`, {
    key: computed(() => `data-tables:${teamId.value}`),
    default: () => [],
    immediate: !!teamId.value,
    watch: [teamId],
  })
  return { ...answer, tables: answer.data, table: (name: string) => answer.data.value.find(table => table.name === name) }
}
