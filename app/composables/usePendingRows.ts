/**
 * The rows of a list whose change is under way, for lists where a confirmation closes at once and
 * the row's own button shows the request (several rows may be under way together).
 * `runFor(id, action)` marks the row while `action` runs, whatever its outcome.
 */
export function usePendingRows() {
  const pending = ref<string[]>([])

  async function runFor<T>(id: string, action: () => Promise<T>): Promise<T> {
    pending.value = [...pending.value, id]
    try {
      return await action()
    }
    finally {
      pending.value = pending.value.filter(other => other !== id)
    }
  }

  return { pending, runFor }
}
