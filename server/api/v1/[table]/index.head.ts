// HEAD answers what GET answers, headers only (supabase-js's `head: true`)
export { default } from './index.get'
