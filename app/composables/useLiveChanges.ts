import type { ChangeEvent } from '#shared/types/changes'

/** A change, or null when the stream (re)opened: what happened before it may not have been seen. */
type Listener = (event: ChangeEvent | null) => void

// One event stream per tab, whatever the number of pages and components listening: the team's
// changes (GET /api/teams/{teamId}/events/stream, the tables the member may view), opened while
// something listens. EventSource reconnects by itself and resumes from the last event id.
const listeners = new Set<Listener>()
let source: EventSource | null = null
let sourceTeam = ''

function open(teamId: string) {
  if (source && sourceTeam === teamId) return
  source?.close()
  sourceTeam = teamId
  source = new EventSource(`/api/teams/${teamId}/events/stream`)
  // the stream opens once its start is fixed: reloading now misses nothing
  source.onopen = () => {
    for (const listener of listeners) listener(null)
  }
  source.onmessage = (message) => {
    let event: ChangeEvent
    try {
      event = JSON.parse(message.data) as ChangeEvent
    }
    catch {
      return
    }
    for (const listener of listeners) listener(event)
  }
}

function closeWhenUnused() {
  if (listeners.size || !source) return
  source.close()
  source = null
  sourceTeam = ''
}

/**
 * Calls `listener` with each change of the current team's records from the moment it is called
 * (in the browser) until the component goes, and with null whenever the stream (re)opens (reload
 * then: changes before it may be unseen). Call it before the component's first fetch: a change
 * made between that fetch and a later subscription would reach nobody, since a stream already
 * open (another page's, while the pages change) does not open again.
 */
export function useLiveChanges(listener: Listener) {
  if (import.meta.server) return
  const { currentTeam } = useWorkspace()
  listeners.add(listener)
  if (currentTeam.value) open(currentTeam.value.id)
  watch(() => currentTeam.value?.id, (teamId) => {
    if (teamId && listeners.has(listener)) open(teamId)
  })
  onScopeDispose(() => {
    listeners.delete(listener)
    closeWhenUnused()
  })
}

/**
 * A number that goes up when a record of `tables` changes (null: any table) or the stream
 * (re)opens, at most once per `delayMs`: made before a useAsyncData and given to its `watch`, the
 * data is subscribed to before it is first fetched, and reloaded on every change after.
 */
export function useLiveVersion(tables: MaybeRefOrGetter<string[] | null>, delayMs = 150): Readonly<Ref<number>> {
  const version = ref(0)
  useLiveRefresh(tables, () => {
    version.value++
  }, delayMs)
  return version
}

/**
 * Reloads with `refresh` when a record of `tables` changes (null: any table), at most once per
 * `delayMs` (a burst of changes is one reload).
 */
export function useLiveRefresh(tables: MaybeRefOrGetter<string[] | null>, refresh: () => unknown, delayMs = 150) {
  let timer: ReturnType<typeof setTimeout> | undefined
  useLiveChanges((event) => {
    const wanted = toValue(tables)
    if (event && wanted && !wanted.includes(event.type.slice(0, event.type.lastIndexOf('.')))) return
    if (timer) return
    timer = setTimeout(() => {
      timer = undefined
      void refresh()
    }, delayMs)
  })
  onScopeDispose(() => clearTimeout(timer))
}
