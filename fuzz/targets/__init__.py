"""One module per fuzz target; each defines ``TestOneInput(data: bytes)``."""
