/**
 * Toasts for the outcome of an action: `notifySuccess(title)`, `notifyFailure(title, error)` (with
 * the server's message), and `copy(text, title)` that puts text on the clipboard and says so.
 */
export function useNotify() {
  const toast = useToast()
  function notifySuccess(title: string, description?: string) {
    toast.add({ title, description, color: 'success', icon: 'i-lucide-check' })
  }
  function notifyFailure(title: string, error: unknown) {
    toast.add({ title, description: errorMessage(error), color: 'error', icon: 'i-lucide-circle-alert' })
  }
  async function copy(text: string, title: string): Promise<boolean> {
    try {
      await navigator.clipboard.writeText(text)
      toast.add({ title, color: 'success', icon: 'i-lucide-clipboard-check' })
      return true
    }
    catch {
      toast.add({ title: 'Could not copy', description: 'Select the text and copy it by hand.', color: 'warning', icon: 'i-lucide-circle-alert' })
      return false
    }
  }
  return { notifySuccess, notifyFailure, copy }
}
