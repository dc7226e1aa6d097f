"""jax.scipy.special's functions by family (funcgrad.scipy.special re-exports them): common (operand
promotion), information (xlogy, entr, kl_div, ...), logexp (softmax, log1mexp), error (ndtr, ndtri, owens_t,
dawsn, wofz), gamma (incomplete gamma/beta, beta, poch, ...), bessel (i0, i1, ...), zeta (zeta, bernoulli),
integrals (exp1, expi, expn, sici, fresnel, spence), hypergeometric (hyp1f1, hyp2f1) and legendre (lpmn,
sph_harm_y)."""
