/**
 * Runs a form's submission: `isSubmitting` while it runs, and the server's error message in
 * `serverError` when it fails (the form shows it; nothing is thrown).
 */
export function useFormSubmit() {
  const isSubmitting = ref(false)
  const serverError = ref('')

  async function submit(action: () => Promise<void>) {
    isSubmitting.value = true
    serverError.value = ''
    try {
      await action()
    }
    catch (error) {
      serverError.value = errorMessage(error)
    }
    finally {
      isSubmitting.value = false
    }
  }

  return { isSubmitting, serverError, submit }
}
