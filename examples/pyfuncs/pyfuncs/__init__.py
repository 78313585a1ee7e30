"""pyfuncs: small functions."""
