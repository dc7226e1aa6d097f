"""grad_fn names as torch 2.13's (what `repr(tensor)` shows as grad_fn=<...>, what code inspecting the graph
reads): one op per entry, the same call in both libraries, the names compared."""
import warnings

import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")


def _ops(t):
    F = t.nn.functional
    x = t.tensor([[0.3, -1.2, 2.0], [1.5, -0.4, 0.9]], requires_grad=True)
    m = t.tensor([[1.0, 0.5], [0.2, 2.0], [0.3, -1.0]], requires_grad=True)
    sq = t.tensor([[2.0, 0.5], [0.3, 1.5]], requires_grad=True)
    v = t.tensor([0.5, -0.3, 0.8], requires_grad=True)
    return {
        'abs': lambda: x.abs(),
        'neg': lambda: -x,
        'exp': lambda: x.exp(),
        'exp2': lambda: x.exp2(),
        'expm1': lambda: x.expm1(),
        'log': lambda: x.abs().log(),
        'log1p': lambda: x.abs().log1p(),
        'log2': lambda: x.abs().log2(),
        'log10': lambda: x.abs().log10(),
        'sqrt': lambda: x.abs().sqrt(),
        'rsqrt': lambda: x.abs().rsqrt(),
        'sin': lambda: x.sin(),
        'cos': lambda: x.cos(),
        'tan': lambda: x.tan(),
        'asin': lambda: (x * 0.1).asin(),
        'acos': lambda: (x * 0.1).acos(),
        'atan': lambda: x.atan(),
        'sinh': lambda: x.sinh(),
        'cosh': lambda: x.cosh(),
        'tanh': lambda: x.tanh(),
        'asinh': lambda: x.asinh(),
        'atanh': lambda: (x * 0.1).atanh(),
        'sigmoid': lambda: x.sigmoid(),
        'erf': lambda: x.erf(),
        'erfc': lambda: x.erfc(),
        'erfinv': lambda: (x * 0.1).erfinv(),
        'lgamma': lambda: x.lgamma(),
        'digamma': lambda: x.digamma(),
        'reciprocal': lambda: x.reciprocal(),
        'square': lambda: x.square(),
        'sign': lambda: x.sign(),
        'floor': lambda: x.floor(),
        'ceil': lambda: x.ceil(),
        'round': lambda: x.round(),
        'trunc': lambda: x.trunc(),
        'frac': lambda: x.frac(),
        'pow2': lambda: x ** 2,
        'pow_t': lambda: x.abs() ** x,
        'rpow': lambda: 2 ** x,
        'add_s': lambda: x + 1,
        'radd': lambda: 1 + x,
        'sub_s': lambda: x - 1,
        'mul_s': lambda: x * 2,
        'div_s': lambda: x / 2,
        'div': lambda: x / (x + 3),
        'sub': lambda: x - x * 2,
        'atan2': lambda: t.atan2(x, x + 1),
        'hypot': lambda: t.hypot(x, x + 1),
        'fmod': lambda: t.fmod(x, 0.7),
        'remainder': lambda: t.remainder(x, 0.7),
        'where': lambda: t.where(x > 0, x, x * 2),
        'maximum': lambda: t.maximum(x, x * 0.5),
        'minimum': lambda: t.minimum(x, x * 0.5),
        'mm': lambda: x @ m,
        'dot': lambda: t.dot(v, v),
        'bmm': lambda: t.bmm(x[None], m[None]),
        't': lambda: x.t(),
        'transpose': lambda: x.transpose(0, 1),
        'permute': lambda: x.permute(1, 0),
        'view': lambda: x.view(3, 2),
        'reshape': lambda: x.reshape(3, 2),
        'flatten': lambda: x.flatten(),
        'squeeze': lambda: x[None].squeeze(0),
        'unsqueeze': lambda: x.unsqueeze(0),
        'expand': lambda: v.expand(2, 3),
        'repeat': lambda: x.repeat(2, 1),
        'index': lambda: x[0],
        'index2': lambda: x[:, 1],
        'index_t': lambda: x[t.tensor([1, 0])],
        'index_b': lambda: x[x > 0],
        'narrow': lambda: x.narrow(1, 0, 2),
        'select': lambda: x.select(1, 1),
        'cat': lambda: t.cat([x, x]),
        'stack': lambda: t.stack([x, x]),
        'split': lambda: x.split(1)[0],
        'chunk': lambda: x.chunk(3, 1)[1],
        'unbind': lambda: x.unbind(0)[1],
        'flip': lambda: x.flip(0),
        'roll': lambda: x.roll(1, 1),
        'gather': lambda: x.gather(1, t.tensor([[0, 1], [2, 0]])),
        'scatter': lambda: x.scatter(1, t.tensor([[0], [1]]), 5.0),
        'index_select': lambda: x.index_select(1, t.tensor([0, 2])),
        'masked_fill': lambda: x.masked_fill(x > 0, 0.0),
        'tril': lambda: x.tril(),
        'triu': lambda: x.triu(),
        'diagonal': lambda: sq.diagonal(),
        'trace': lambda: sq.trace(),
        'sum': lambda: x.sum(),
        'mean': lambda: x.mean(),
        'prod': lambda: x.prod(),
        'max': lambda: x.max(),
        'max_d': lambda: x.max(1)[0],
        'min': lambda: x.min(),
        'amax': lambda: x.amax(1),
        'logsumexp': lambda: x.logsumexp(1),
        'var': lambda: x.var(),
        'std': lambda: x.std(1),
        'cumsum': lambda: x.cumsum(1),
        'cumprod': lambda: x.cumprod(1),
        'softmax': lambda: x.softmax(1),
        'log_softmax': lambda: x.log_softmax(1),
        'sort': lambda: x.sort(1)[0],
        'topk': lambda: x.topk(2)[0],
        'kthvalue': lambda: x.kthvalue(2)[0],
        'median': lambda: x.median(),
        'clone': lambda: x.clone(),
        'contiguous': lambda: x.t().contiguous(),
        'to64': lambda: x.to(t.float64),
        'float': lambda: x.double().float(),
        'type_as': lambda: x.type_as(sq),
        'inverse': lambda: sq.inverse(),
        'det': lambda: sq.det(),
        'slogdet': lambda: t.linalg.slogdet(sq)[1],
        'cholesky': lambda: t.linalg.cholesky(sq @ sq.T),
        'qr': lambda: t.linalg.qr(sq)[0],
        'svd': lambda: t.linalg.svd(sq)[1],
        'eigh': lambda: t.linalg.eigh(sq @ sq.T)[0],
        'solve': lambda: t.linalg.solve(sq, sq),
        'pinv': lambda: t.linalg.pinv(x),
        'cross': lambda: t.linalg.cross(x, x + 1),
        'linear': lambda: F.linear(x, m.T),
        'linear_b': lambda: F.linear(x, m.T, v[:2]),
        'conv1d': lambda: F.conv1d(x[None], sq[:, :, None].expand(2, 2, 1)),
        'relu': lambda: F.relu(x),
        'gelu': lambda: F.gelu(x),
        'gelu_tanh': lambda: F.gelu(x, approximate='tanh'),
        'silu': lambda: F.silu(x),
        'mish': lambda: F.mish(x),
        'softplus': lambda: F.softplus(x),
        'elu': lambda: F.elu(x),
        'selu': lambda: F.selu(x),
        'celu': lambda: F.celu(x),
        'leaky': lambda: F.leaky_relu(x),
        'hardswish': lambda: F.hardswish(x),
        'hardsigmoid': lambda: F.hardsigmoid(x),
        'logsigmoid': lambda: F.logsigmoid(x),
        'tanhshrink': lambda: F.tanhshrink(x),
        'glu': lambda: F.glu(x[:, :2]),
        'normalize': lambda: F.normalize(x),
        'pad': lambda: F.pad(x, (1, 1)),
        'pad_r': lambda: F.pad(x[None], (1, 1), mode='reflect'),
        'interp': lambda: F.interpolate(x[None], scale_factor=2),
        'cdist': lambda: t.cdist(x, x + 1),
        'one_hot_mul': lambda: F.one_hot(t.tensor([0, 2]), 3) * x,
        'mse': lambda: F.mse_loss(x, x * 0),
        'l1': lambda: F.l1_loss(x, x * 0),
        'smooth_l1': lambda: F.smooth_l1_loss(x, x * 0),
        'ce': lambda: F.cross_entropy(x, t.tensor([0, 2])),
        'nll': lambda: F.nll_loss(x.log_softmax(1), t.tensor([0, 2])),
        'kl': lambda: F.kl_div(x.log_softmax(1), x.detach().softmax(1), reduction='batchmean'),
        'nan_to_num': lambda: x.nan_to_num(),
        'sinc': lambda: x.sinc(),
        'logit': lambda: x.sigmoid().logit(),
        'xlogy': lambda: t.xlogy(x, x.abs() + 1),
        'polygamma': lambda: t.polygamma(1, x.abs() + 1),
        'i0': lambda: t.i0(x),
        'logaddexp': lambda: t.logaddexp(x, x * 2),
        'logcumsumexp': lambda: x.logcumsumexp(1),
        'take': lambda: x.take(t.tensor([0, 4])),
        'movedim': lambda: x.movedim(0, 1),
        'swapaxes': lambda: x.swapaxes(0, 1),
        'tile': lambda: x.tile(2),
        'broadcast_to': lambda: v.broadcast_to(2, 3),
        'as_strided': lambda: x.as_strided((2, 2), (1, 1)),
        'fliplr': lambda: x.fliplr(),
        'rot90': lambda: x.rot90(),
        'diag_embed': lambda: t.diag_embed(v),
        'fft': lambda: t.fft.fft(x).abs(),
        'complex_abs': lambda: t.complex(x, x).abs(),
        'view_as_real': lambda: t.view_as_real(t.complex(x, x)),
        'abs_': lambda: (x * 1).abs_(),
        'neg_': lambda: (x * 1).neg_(),
        'sqrt_': lambda: (x.abs() + 1).sqrt_(),
        'pow_': lambda: (x * 1).pow_(2),
        'div_': lambda: (x * 1).div_(2),
        'sub_': lambda: (x * 1).sub_(x),
        'addcmul_': lambda: (x * 1).addcmul_(x, x),
        'lerp_': lambda: (x * 1).lerp_(x, 0.5),
        'masked_fill_': lambda: (x * 1).masked_fill_(x > 0, 0.0),
        'index_add': lambda: x.index_add(0, t.tensor([0]), x[:1]),
        'index_fill': lambda: x.index_fill(1, t.tensor([0]), 0.0),
        'index_copy': lambda: x.index_copy(0, t.tensor([1, 0]), x * 2),
        'scatter_add': lambda: x.scatter_add(1, t.tensor([[0], [1]]), x[:, :1]),
        'put': lambda: x.put(t.tensor([0]), x[0, :1]),
        'masked_scatter': lambda: x.masked_scatter(x > 0, x * 2),
        'masked_select': lambda: x.masked_select(x > 0),
        'nonzero_idx': lambda: x[x.nonzero(as_tuple=True)],
        'setitem': lambda: (lambda y: (y.__setitem__(0, 1.0), y)[1])(x * 1),
        'setitem_t': lambda: (lambda y: (y.__setitem__((slice(None), 1), v[:2]), y)[1])(x * 1),
        'fill_': lambda: (x * 1).fill_(2.0),
        'zero_': lambda: (x * 1).zero_(),
        'mv@': lambda: x @ v, 'vm@': lambda: v[:2] @ x, 'vv@': lambda: v @ v, 'mv': lambda: t.mv(x, v),
        'bmm@': lambda: x[None].expand(2, 2, 3) @ m[None].expand(2, 3, 2), 'bv@': lambda: x[None] @ v,
        'vb@': lambda: v[:2] @ x[None], 'mb@': lambda: sq @ x[None], 'outer': lambda: t.outer(v, v),
        'norm': lambda: x.norm(), 'norm_1': lambda: x.norm(p=1), 'norm_inf': lambda: x.norm(p=float('inf')),
        'norm_d': lambda: x.norm(dim=1), 'vnorm': lambda: t.linalg.vector_norm(x), 'lnorm': lambda: t.linalg.norm(x),
        'mnorm': lambda: t.linalg.matrix_norm(x), 'nuc': lambda: t.linalg.matrix_norm(sq, 'nuc'),
        'softsign': lambda: F.softsign(x),
        'clamp_': lambda: (x * 1).clamp_(0, 1), 'clamp_t_': lambda: (x * 1).clamp_(min=x.detach() * 0),
        'clip_': lambda: (x * 1).clip_(0, 1), 'clamp_min_': lambda: (x * 1).clamp_min_(0),
        'clamp_min_t_': lambda: (x * 1).clamp_min_(x.detach() * 0), 'clamp_max_': lambda: (x * 1).clamp_max_(1),
        'clamp': lambda: x.clamp(-1, 1), 'clamp_min': lambda: x.clamp(min=0), 'sum_d': lambda: x.sum(1),
        'mean_d': lambda: x.mean(0), 'layer_norm': lambda: F.layer_norm(x, (3,)),
        'layer_norm_wb': lambda: F.layer_norm(x, (3,), v, v), 'group_norm': lambda: F.group_norm(x[None], 1),
        'batch_norm': lambda: F.batch_norm(x, None, None, training=True),
        'batch_norm_eval': lambda: F.batch_norm(x, v.detach(), v.detach().abs(), training=False),
        'addmm': lambda: t.addmm(sq, x, m), 'addmm_b0': lambda: t.addmm(sq, x, m, beta=0),
        'addmv': lambda: t.addmv(v[:2], x, v), 'addr': lambda: t.addr(sq, v[:2], v[:2], alpha=2),
        'baddbmm': lambda: t.baddbmm(sq[None], x[None], m[None]), 'addbmm': lambda: t.addbmm(sq, x[None], m[None]),
        'lerp': lambda: t.lerp(x, x * 2, 0.3), 'lerp_t': lambda: t.lerp(x, x * 2, v.detach()),
        'lerp_t_': lambda: (x * 1).lerp_(x * 2, v), 'addcmul': lambda: t.addcmul(x, x, x, value=0.5),
        'addcdiv': lambda: t.addcdiv(x, x, x + 3, value=0.5), 'addcdiv_': lambda: (x * 1).addcdiv_(x, x + 3),
        'var_mean': lambda: t.var_mean(x)[1], 'std_mean': lambda: t.std_mean(x, 1)[0],
        'cummax': lambda: x.cummax(1)[0], 'cummin': lambda: t.cummin(x, 0).values,
        'embedding': lambda: F.embedding(t.tensor([0, 1]), m),
        'embedding_pad': lambda: F.embedding(t.tensor([[0, 1]]), m, padding_idx=0, scale_grad_by_freq=True),
        'nn_embedding': lambda: t.nn.Embedding(3, 2)(t.tensor([[0, 2]])),
        'deg2rad': lambda: x.deg2rad(), 'rad2deg': lambda: t.rad2deg(x), 'deg2rad_h': lambda: x.half().deg2rad(),
        'dist': lambda: t.dist(x, x * 2), 'dist_p': lambda: t.dist(x, v, 3), 'renorm': lambda: x.renorm(2, 0, 1),
        'renorm_': lambda: (x * 1).renorm_(1, 1, 0.5),
        'i0e': lambda: t.special.i0e(x), 'i1': lambda: t.special.i1(x), 'i1e': lambda: t.special.i1e(x),
        'ndtr': lambda: t.special.ndtr(x), 'ndtri': lambda: t.special.ndtri(x.sigmoid()),
        'log_ndtr': lambda: t.special.log_ndtr(x), 'erfcx': lambda: t.special.erfcx(x),
        'entr': lambda: t.special.entr(x.abs()), 'xlog1py': lambda: t.special.xlog1py(x, x.abs()),
        'xlog1py_1': lambda: t.special.xlog1py(2.0, x.abs()), 'xlog1py_2': lambda: t.special.xlog1py(x, 2.0),
        'xlogy_1': lambda: t.xlogy(2.0, x.abs()), 'xlogy_2': lambda: t.special.xlogy(x, 2.0),
        'xlogy_t': lambda: t.xlogy(x, t.tensor(2.0)), 'xlogy_2_': lambda: (x * 1).xlogy_(2.0),
        'xlogy_t_': lambda: (x * 1).xlogy_(x.abs()), 'mvlgamma': lambda: t.mvlgamma(x.abs() + 2, 3),
        'multigammaln': lambda: t.special.multigammaln(x.abs() + 2, 2), 'mvlgamma_': lambda: (x.abs() + 2).mvlgamma_(2),
        'fft_r': lambda: t.fft.fft(x), 'fft_c': lambda: t.fft.fft(t.complex(x, x)), 'ifft_r': lambda: t.fft.ifft(x),
        'rfft': lambda: t.fft.rfft(x), 'irfft': lambda: t.fft.irfft(t.complex(x, x)), 'hfft': lambda: t.fft.hfft(x),
        'ihfft': lambda: t.fft.ihfft(x), 'fft2': lambda: t.fft.fft2(x), 'rfftn': lambda: t.fft.rfftn(x),
        'irfft2': lambda: t.fft.irfft2(t.complex(x, x)), 'hfftn': lambda: t.fft.hfftn(x),
        'ihfft2': lambda: t.fft.ihfft2(x), 'ihfftn_1': lambda: t.fft.ihfftn(x, dim=(1,)),
        'fftshift': lambda: t.fft.fftshift(x), 'ifftshift': lambda: t.fft.ifftshift(x, dim=0),
        'prod_d': lambda: x.prod(1), 'prod_dk': lambda: t.prod(x, 0, keepdim=True),
        'pdist': lambda: F.pdist(x), 'pdist_1': lambda: F.pdist(m, 1), 'block_diag': lambda: t.block_diag(x, sq, v),
        'square_': lambda: (x * 1).square_(), 'real': lambda: t.complex(x, x).real, 'imag': lambda: t.complex(x, x).imag,
        'real_f': lambda: t.real(t.complex(x, x)), 'polar': lambda: t.polar(x.abs(), x),
        'tensordot': lambda: t.tensordot(x, m, 1), 'tensordot_2': lambda: t.tensordot(x, x, 2),
        'tensordot_l': lambda: t.tensordot(x, v, ([1], [0])),
        'stft': lambda: t.stft(x.reshape(-1).repeat(3), 4, window=t.hann_window(4), return_complex=True),
        'stft_b': lambda: t.stft(x.repeat(1, 3), 4, window=t.hann_window(4), return_complex=True),
        'trapezoid': lambda: t.trapezoid(x), 'trapz_dx': lambda: t.trapz(x, dx=0.5, dim=0),
        'T': lambda: x.T, 'T_1d': lambda: v.T, 'T_3d': lambda: x[None].T, 'H': lambda: x.H, 'mH': lambda: x.mH,
        'H_c': lambda: t.complex(x, x).H, 'kron': lambda: t.kron(sq, sq), 'kron_v': lambda: t.kron(v, x),
        'unfold': lambda: x.unfold(1, 2, 1), 'unfold_t': lambda: x.t().unfold(0, 1, 2),
        'matrix_exp': lambda: t.linalg.matrix_exp(sq), 'matrix_exp_0': lambda: t.matrix_exp(sq[:0, :0]),
    }


_NAMES = list(_ops(fg))


def _name(t, op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = _ops(t)[op]()
    return r.grad_fn.name() if r.grad_fn is not None else None


@pytest.mark.parametrize("op", _NAMES)
def test_grad_fn_name_as_torch(op):
    assert _name(fg, op) == _name(torch, op)


def _graph(fn):
    """A node's name and its next_functions' names (None for (None, 0)), two levels deep."""
    def rec(node, depth):
        if node is None:
            return None
        kids = [rec(n, depth + 1) for n, _ in node.next_functions] if depth < 2 else []
        return type(node).__name__, kids
    return rec(fn.grad_fn, 0)


@pytest.mark.parametrize("case", ["layer_norm_no_bias", "layer_norm_plain", "conv_no_bias", "batch_norm_eval",
                                  "batch_norm_no_weight", "group_norm_no_weight", "rdiv", "clamp_min_tensor",
                                  "clamp_max_tensor", "clip_min_tensor", "instance_norm", "instance_norm_affine",
                                  "instance_norm_eval"])
def test_next_functions_of_absent_optional_tensors_and_number_over_tensor_as_torch(case):
    """torch lists (None, 0) for an optional tensor argument not given (layer_norm / conv without bias, ...), no
    entry for batch_norm's running statistics, and computes number / tensor as reciprocal then mul."""
    import numpy as np
    def make(L):
        x = L.ones(2, 3, requires_grad=True)
        w, b = L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)
        F = L.nn.functional
        return {"layer_norm_no_bias": lambda: F.layer_norm(x, (3,), w, None),
                "layer_norm_plain": lambda: F.layer_norm(x, (3,)),
                "conv_no_bias": lambda: F.conv1d(x[None], L.ones(2, 2, 2, requires_grad=True)),
                "batch_norm_eval": lambda: F.batch_norm(x, L.zeros(3), L.ones(3), w, None, training=False),
                "batch_norm_no_weight": lambda: F.batch_norm(x, None, None, None, b, training=True),
                "group_norm_no_weight": lambda: F.group_norm(x[..., None], 3, None, b),
                "rdiv": lambda: 3 / x,
                "clamp_min_tensor": lambda: L.clamp(x, min=w * 0.5),
                "clamp_max_tensor": lambda: x.clamp(max=w * 0.5),
                "clip_min_tensor": lambda: x.clip(w * 0.5),
                "instance_norm": lambda: F.instance_norm(x[None].repeat(2, 1, 1)),
                "instance_norm_affine": lambda: F.instance_norm(x[:, :, None].repeat(1, 1, 4), L.zeros(3), L.ones(3),
                                                                w, b),
                "instance_norm_eval": lambda: F.instance_norm(x[:, :, None].repeat(1, 1, 4), L.zeros(3), L.ones(3),
                                                              w, None, use_input_stats=False)}[case]()
    got, want = make(fg), make(torch)
    assert _graph(got) == _graph(want)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


@pytest.mark.parametrize("call", ["fn", "method", "clip", "inplace"])
def test_clamp_with_a_tensor_and_a_number_bound_is_a_type_error(call):
    """torch's clamp has a Tensor-bounds and a Number-bounds overload: one bound of each is no overload."""
    for L in (fg, torch):
        x, lo = L.ones(3), L.zeros(3)
        f = {"fn": lambda: L.clamp(x, lo, 0.5), "method": lambda: x.clamp(-1, lo),
             "clip": lambda: L.clip(x, lo, 1), "inplace": lambda: x.clamp_(lo, 2.0)}[call]
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            f()


@pytest.mark.parametrize("case", ["set_number", "set_select", "set_element", "set_tensor_no_grad", "set_tensor",
                                  "view_index_put", "mul_number", "add_number_view", "div_number_view", "imul",
                                  "sub_tensor_view", "relu_view", "fill_tensor", "fill_tensor_view", "pow_view"])
def test_in_place_graphs_as_torch(case):
    """In-place ops and indexed assignment: the node and its next_functions as torch's. On a view, torch's
    CopySlices lists the base, then the op's entries after its self; a number written by x[i] = v is a 0-d
    tensor filled in (an entry), as is the number of mul_/add_/sub_/div_ (wrapped as a tensor)."""
    import numpy as np

    def make(L):
        a = L.tensor([[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.7, 0.9], [0.1, 0.4, -2.0, 1.0]], requires_grad=True)
        v = L.tensor([2.0, 3.0], requires_grad=True)
        b = a.clone()
        {"set_number": lambda: b.__setitem__((slice(None), slice(1, 3)), 5.0),
         "set_select": lambda: b.__setitem__(1, 2.0),
         "set_element": lambda: b.__setitem__((1, 2), 2.0),
         "set_tensor_no_grad": lambda: b.__setitem__((0, slice(1, 3)), v.detach()),
         "set_tensor": lambda: b.__setitem__((0, slice(1, 3)), v),
         "view_index_put": lambda: b[1:, :].__setitem__(L.tensor([0]), 1.0),
         "mul_number": lambda: b.mul_(2),
         "add_number_view": lambda: b[:, 1:3].add_(1, alpha=2),
         "div_number_view": lambda: b[1].div_(4.0),
         "imul": lambda: b[1:].__imul__(3),
         "sub_tensor_view": lambda: b[0, 1:3].sub_(v),
         "relu_view": lambda: b[1].relu_(),
         "fill_tensor": lambda: b.fill_(L.tensor(2.0)),
         "fill_tensor_view": lambda: b[:, 0].fill_(L.tensor(2.0)),
         "pow_view": lambda: b[1:].pow_(2)}[case]()
        return b
    got, want = make(fg), make(torch)
    assert _graph(got) == _graph(want)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_next_functions_of_a_custom_function_list_its_tensor_inputs_without_grad():
    """torch lists a custom Function's tensor inputs in order, (None, 0) for one that does not require grad, and
    nothing for a non-tensor argument."""
    graphs = []
    for L in (fg, torch):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k, c):
                return a * b * k + c

            @staticmethod
            def backward(ctx, g):
                return g, g, None, g
        y = F.apply(L.ones(2, requires_grad=True), L.ones(2), 2.0, L.ones(2, requires_grad=True))
        graphs.append([None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions])
    assert graphs[0] == graphs[1] == ["AccumulateGrad", None, "AccumulateGrad"]


_DOUBLE = {
    "sin": lambda L, x: x.sin(), "exp": lambda L, x: x.exp(), "pow3": lambda L, x: x ** 3, "abs": lambda L, x: x.abs(),
    "div": lambda L, x: x / 3.0, "sum": lambda L, x: x.sum(), "mean": lambda L, x: x.mean(0),
    "mm": lambda L, x: x @ L.ones(3, 2), "permute": lambda L, x: x.permute(1, 0), "index": lambda L, x: x[0],
    "slice": lambda L, x: x[:, 1:], "gather": lambda L, x: x.gather(1, L.tensor([[0], [2]])),
    "tanh": lambda L, x: x.tanh(), "sigmoid": lambda L, x: x.sigmoid(), "relu": lambda L, x: x.relu(),
    "softmax": lambda L, x: x.softmax(-1), "log_softmax": lambda L, x: x.log_softmax(-1),
    "gelu": lambda L, x: L.nn.functional.gelu(x), "elu": lambda L, x: L.nn.functional.elu(x),
    "mse": lambda L, x: L.nn.functional.mse_loss(x, L.zeros(2, 3)), "clamp": lambda L, x: x.clamp(-1, 1),
    "max": lambda L, x: x.max(), "cumsum": lambda L, x: x.cumsum(1), "to64": lambda L, x: x.double()}


@pytest.mark.parametrize("op", sorted(_DOUBLE))
def test_double_backward_node_names_as_torch(op):
    """create_graph=True: the gradient's grad_fn is named as torch's (the op its backward is, or ends in), and
    a one-op backward (tanh_backward, ...) lists grad_output first in next_functions."""
    names = []
    for L in (fg, torch):
        x = L.tensor([[0.3, -1.2, 2.0], [1.5, -0.4, 0.9]], requires_grad=True)
        y = _DOUBLE[op](L, x)
        (g,) = L.autograd.grad(y, x, L.ones_like(y).requires_grad_(), create_graph=True)
        entry = g.grad_fn.next_functions[0][0]
        names.append((g.grad_fn.name(), None if entry is None else entry.name()))
    if names[1][0].endswith("BackwardBackward0") or names[1][0].endswith("BackwardDataBackward0"):
        assert names[0] == names[1]
    else:
        assert names[0][0] == names[1][0]
