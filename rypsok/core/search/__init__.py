"""The search pipeline's pure stages: URL normalization, deduplication and ranking."""
