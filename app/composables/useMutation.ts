/**
 * Runs a change (a form submission, a button's action): `pending` while it runs, the server's
 * message in `error` when it fails (forms show it). `run(action, { success, failure })` toasts
 * `success` when it worked and `failure` (with the server's message) when it did not, and
 * resolves to whether it worked; nothing is thrown.
 */
export function useMutation() {
  const pending = ref(false)
  const error = ref('')
  const { notifySuccess, notifyFailure } = useNotify()

  async function run<T>(
    action: () => Promise<T>,
    messages: { success?: string | ((result: T) => string), failure?: string } = {},
  ): Promise<boolean> {
    pending.value = true
    error.value = ''
    try {
      const result = await action()
      const success = typeof messages.success === 'function' ? messages.success(result) : messages.success
      if (success) notifySuccess(success)
      return true
    }
    catch (failure) {
      error.value = errorMessage(failure)
      if (messages.failure) notifyFailure(messages.failure, failure)
      return false
    }
    finally {
      pending.value = false
    }
  }

  return { pending, error, run }
}
