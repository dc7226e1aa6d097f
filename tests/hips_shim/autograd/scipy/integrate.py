"""autograd.scipy.integrate.odeint (SciPy's signature) on funcgrad.experimental.ode.odeint."""
from funcgrad.experimental.ode import odeint as _odeint


def odeint(func, y0, t, args=(), **kwargs):
    """y(t) for dy/dt = func(y, t, *args); kwargs rtol/atol/mxstep as funcgrad's odeint takes them."""
    return _odeint(func, y0, t, *args, **{k: v for k, v in kwargs.items() if k in ("rtol", "atol", "mxstep")})
