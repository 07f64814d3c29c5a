export * from '../permissions'
