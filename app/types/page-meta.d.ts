import type { Permission } from '#shared/permissions'

declare module '#app' {
  interface PageMeta {
    /** The permission the current team's role needs to open the page. */
    permission?: Permission
    /** Where a visitor without the permission is sent. */
    permissionRedirect?: string
    /** A settings section's column: narrow for a form, wide (the default) for tables. */
    settingsWidth?: 'narrow' | 'wide'
  }
}

export {}
