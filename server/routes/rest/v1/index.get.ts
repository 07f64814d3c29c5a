// the root of a PostgREST API describes it: the OpenAPI document
export { default } from '../../../api/v1/openapi.json.get'
