"""What the native tier's generated functions import at run time (numba is imported here, so this module
is loaded only once the native tier compiles something): `call_loop`, which calls one of NumPy's own
ufunc inner loops from compiled code, so that exp, tanh, log, pow, ... give NumPy's results bit for bit
(NumPy's SIMD loops differ from the C library's scalar functions in the last bit)."""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def call_loop(typingctx, fptr, data, args, dims, steps):
    """fptr(args, dims, steps, data): a NumPy inner loop `void (char **, npy_intp const *, npy_intp
    const *, void *)` at address fptr, every argument passed as an address (an integer)."""
    if not all(isinstance(t, types.Integer) for t in (fptr, data, args, dims, steps)):
        return None
    sig = types.void(fptr, data, args, dims, steps)

    def codegen(context, builder, signature, llargs):
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i8p, i8p, i8p])
        fn = builder.inttoptr(llargs[0], fnty.as_pointer())
        a, d, s, dat = (builder.inttoptr(x, i8p) for x in (llargs[2], llargs[3], llargs[4], llargs[1]))
        builder.call(fn, [a, d, s, dat])
        return context.get_dummy_value()
    return sig, codegen
