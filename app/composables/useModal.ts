import type { Component } from 'vue'
import type { ComponentProps } from 'vue-component-type-helpers'

// The control to give focus back to: the element that had it, or, when a menu item opened the
// modal (the menu is gone by then), the button that opened that menu.
function opener(): HTMLElement | null {
  const active = document.activeElement as HTMLElement | null
  const menu = active?.closest<HTMLElement>('[role="menu"]')
  if (menu?.id) return document.querySelector<HTMLElement>(`[aria-controls="${CSS.escape(menu.id)}"]`) ?? active
  return active
}

/**
 * Opens a modal component through Nuxt UI's overlay (the modal owns its open state and ends with
 * `emit('close', result)`): `const confirm = useModal(AppConfirmModal)`, then
 * `await confirm({ title, ... })` resolves to that result. When the modal is gone, focus returns
 * to the control that opened it (or the main content if that control is gone too).
 */
export function useModal<T extends Component>(component: T) {
  const overlay = useOverlay()
  return async function open(props?: ComponentProps<T>) {
    const returnTo = import.meta.client ? opener() : null
    const instance = overlay.create(component, { destroyOnClose: true })
    const result = await instance.open(props).result
    await new Promise<void>((resolve) => {
      const stop = watch(() => overlay.overlays.some(entry => entry.id === instance.id), (present) => {
        if (present) return
        stop()
        resolve()
      }, { immediate: false })
      if (!overlay.overlays.some(entry => entry.id === instance.id)) {
        stop()
        resolve()
      }
    })
    await nextTick()
    const target = returnTo?.isConnected ? returnTo : document.getElementById('main-content')
    target?.focus()
    return result
  }
}
