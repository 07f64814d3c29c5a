import type { Permission } from '#shared/permissions'

declare module '#app' {
  interface PageMeta {
    /** The permission the current team's role needs to open the page. */
    permission?: Permission
    /** Where a visitor without the permission is sent. */
    permissionRedirect?: string
  }
}

export {}
