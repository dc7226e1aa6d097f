"""The rest of JAX's top level, private: jax.nn's functions (nn.py) and initializers (initializers.py).
Nothing here imports the torch face; the public paths (funcgrad.nn, funcgrad.nn.initializers) re-export."""
