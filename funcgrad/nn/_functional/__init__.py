"""torch.nn.functional by family (private): funcgrad.nn.functional is the public face that re-exports
these modules."""
