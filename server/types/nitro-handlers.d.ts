// The route table Nitro builds its router from (a virtual module of the build); server/plugins/route-methods.ts reads it.
declare module '#nitro-internal-virtual/server-handlers' {
  import type { EventHandler, LazyEventHandler } from 'h3'

  export const handlers: { route: string, method?: string, handler: EventHandler | LazyEventHandler, lazy?: boolean, middleware?: boolean }[]
}
