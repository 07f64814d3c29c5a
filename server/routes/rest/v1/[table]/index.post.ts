// /rest/v1 is the same API as /api/v1, where PostgREST clients (supabase-js) look for it
export { default } from '../../../../api/v1/[table]/index.post'
