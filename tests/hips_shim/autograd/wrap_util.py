"""HIPS's argnum plumbing: unary_to_nary turns op(fun, x, ...) into op(fun, argnum=0, ...)(*args, **kwargs)."""
import functools


def get_name(f):
    return getattr(f, "__name__", "[unknown name]")


def subvals(seq, replacements):
    out = list(seq)
    for i, v in replacements:
        out[i] = v
    return tuple(out)


def unary_to_nary(unary_operator):
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        assert type(argnum) in (int, tuple, list), argnum

        def nary_f(*args, **kwargs):
            def unary_f(x):
                pairs = [(argnum, x)] if isinstance(argnum, int) else zip(argnum, x)
                return fun(*subvals(args, pairs), **kwargs)
            unary_f.__name__ = get_name(fun)
            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *op_args, **op_kwargs)

        op, name = get_name(unary_operator), get_name(fun)
        nary_f.__name__ = f"{op}_of_{name}_wrt_argnum_{argnum}"
        nary_f.__doc__ = (f"    {op} of function {name} with respect to argument number {argnum}. Takes the\n"
                          f"    same arguments as {name} but returns the {op}.\n")
        return nary_f
    return nary_operator
