"""Coverage-guided fuzz targets for every parser of external bytes (REQ-SEC-023).

See fuzz/README.md. Nothing here is imported by the product.
"""
