"""Bottom layer: pointers, did-you-mean, safe reads and writes, path expansion, escapes, display paths, version."""
