/** Toasts for the outcome of an action: a failure carries the server's message. */
export function useNotify() {
  const toast = useToast()
  return {
    notifyFailure(title: string, error: unknown) {
      toast.add({ title, description: errorMessage(error), color: 'error', icon: 'i-lucide-circle-alert' })
    },
  }
}
