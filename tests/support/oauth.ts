// The tests' and the benchmarks' one harness is in scripts/harness (scripts never import from tests).
export * from '../../scripts/harness/oauth'
