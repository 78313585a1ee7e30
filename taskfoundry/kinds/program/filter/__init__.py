"""The gold/dummy filter: keep the tests that pass on gold and fail on every dummy."""
