export { default } from '../../../../api/v1/rpc/[...name]'
