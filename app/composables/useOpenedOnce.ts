/**
 * Whether `open` has been true at least once: a modal kept in a page's template as a lazy
 * component (`<LazyX v-if="opened" v-model:open="open">`) is fetched and mounted when first
 * opened, not with the page, and stays mounted after, so that it closes with its animation.
 */
export function useOpenedOnce(open: Ref<boolean>): Readonly<Ref<boolean>> {
  const opened = ref(open.value)
  watch(open, (value) => {
    if (value) opened.value = true
  }, { flush: 'sync' })
  return readonly(opened)
}
