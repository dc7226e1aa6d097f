"""torch names with no computation behind them: torch.jit's on funcgrad.jit (script/trace give back eager code with
TorchScript's results; decorators and queries behave as in eager torch; save/load round-trips; jit is still JAX's) and the
layout / memory_format tags."""
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp

torch = pytest.importorskip("torch")


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    fm = fg.nn.Sequential(fg.nn.Linear(3, 4), fg.nn.ReLU(), fg.nn.Linear(4, 2))
    fm.load_state_dict({k: fg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return fm, tm


def test_script_and_trace_give_torchscript_results():
    fm, tm = _pair()
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    want = torch.jit.script(tm)(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(fg.jit.script(fm)(fg.tensor(x)).detach().numpy(), want, rtol=1e-6)
    traced = fg.jit.trace(fm, fg.tensor(x))
    np.testing.assert_allclose(traced(fg.tensor(x)).detach().numpy(),
                               torch.jit.trace(tm, torch.tensor(x))(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert isinstance(fg.jit.script(fm), fg.jit.ScriptModule)


def test_trace_needs_example_inputs_like_torch():
    fm, tm = _pair()
    for lib, m in ((torch, tm), (fg, fm)):
        with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
            lib.jit.trace(m)


def test_decorators_and_queries_match_eager_torch():
    for lib in (torch, fg):
        @lib.jit.ignore
        def helper(x):
            return x + 1

        @lib.jit.unused
        def other(x):
            return x * 2

        assert helper(1) == 2 and other(2) == 4
        assert lib.jit.is_scripting() is False and lib.jit.is_tracing() is False
        assert lib.jit.annotate(list, [1]) == [1]
        assert lib.jit.wait(lib.jit.fork(lambda a: a * 3, 2)) == 6


def test_save_load_round_trip(tmp_path):
    fm, _ = _pair()
    path = tmp_path / "m.pt"
    fg.jit.save(fg.jit.script(fm), str(path))
    back = fg.jit.load(str(path))
    x = fg.ones(2, 3)
    np.testing.assert_array_equal(back(x).detach().numpy(), fm(x).detach().numpy())


def test_jit_is_still_the_functional_compiler():
    f = fg.jit(lambda a: jnp.sin(a) * 2)
    np.testing.assert_allclose(np.asarray(f(jnp.arange(3.0))), np.sin(np.arange(3.0)) * 2, rtol=1e-6)
    assert f._cache_size() == 1


def test_layout_and_memory_format_tags_match_torch():
    import pickle
    for name in ("channels_last", "channels_last_3d", "contiguous_format", "preserve_format", "strided",
                 "sparse_coo"):
        ours, theirs = getattr(fg, name), getattr(torch, name)
        assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
        assert pickle.loads(pickle.dumps(ours)) is ours
    assert isinstance(fg.channels_last, fg.memory_format) and isinstance(fg.strided, fg.layout)
    assert fg.ones(2).layout == fg.strided and fg.ones(2).layout != fg.sparse_coo
    assert torch.ones(2).layout == torch.strided
