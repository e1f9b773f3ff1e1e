"""The benchmarks and measurements, run from the repository root as modules
(`python -m bench.search`), so that they import rypsok and tests.support from the
work tree (bench/README.md)."""
