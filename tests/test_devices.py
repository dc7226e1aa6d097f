"""Device namespaces on a machine without a GPU, compared with the installed CPU-only PyTorch."""
import pickle

import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(torch.cuda.is_available() or fg.cuda.is_available(),
                                reason="these checks describe a machine without a GPU")


def outcome(f, m):
    try:
        return ("ok", f(m))
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e))


VALUE_CASES = [
    lambda m: m.cuda.is_available(),
    lambda m: m.cuda.device_count(),
    lambda m: m.cuda.is_initialized(),
    lambda m: m.cuda.memory_allocated(),
    lambda m: m.cuda.max_memory_allocated(),
    lambda m: m.cuda.memory_reserved(),
    lambda m: m.cuda.max_memory_reserved(),
    lambda m: m.cuda.memory_allocated("cuda:0"),
    lambda m: dict(m.cuda.memory_stats()),
    lambda m: m.cuda.empty_cache(),
    lambda m: m.cuda.manual_seed(1),
    lambda m: m.cuda.manual_seed_all(1),
    lambda m: m.cuda.seed_all(),
    lambda m: m.cuda.get_rng_state_all(),
    lambda m: m.cuda.is_bf16_supported(),
    lambda m: m.cuda.get_arch_list(),
    lambda m: m.cuda.set_device(-1),
    lambda m: m.cuda.current_device(),
    lambda m: m.cuda.get_device_name(),
    lambda m: m.cuda.get_device_name(0),
    lambda m: m.cuda.get_device_capability(),
    lambda m: m.cuda.get_device_properties(0),
    lambda m: m.cuda.synchronize(),
    lambda m: m.cuda.init(),
    lambda m: m.cuda.current_stream(),
    lambda m: m.cuda.initial_seed(),
    lambda m: m.cuda.mem_get_info(),
    lambda m: m.cuda.Stream(),
    lambda m: m.cuda.Event(),
    lambda m: m.cuda.set_device(0),
    lambda m: m.cuda.set_device("cpu"),
    lambda m: m.cuda.device("cpu"),
    lambda m: m.cuda.device(0).__enter__(),
    lambda m: m.cuda.FloatTensor(2),
    lambda m: m.backends.cudnn.is_available(),
    lambda m: m.backends.cudnn.version(),
    lambda m: m.backends.cudnn.enabled,
    lambda m: m.backends.cudnn.benchmark,
    lambda m: m.backends.cudnn.deterministic,
    lambda m: m.backends.cudnn.allow_tf32,
    lambda m: m.backends.mps.is_available(),
    lambda m: m.backends.mps.is_built(),
    lambda m: m.backends.cuda.is_built(),
    lambda m: m.backends.cuda.matmul.allow_tf32,
    lambda m: m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    lambda m: m.get_float32_matmul_precision(),
    lambda m: m.accelerator.is_available(),
    lambda m: m.accelerator.current_accelerator(),
    lambda m: m.accelerator.device_count(),
    lambda m: m.accelerator.current_device_index(),
    lambda m: m.accelerator.synchronize(),
]


@pytest.mark.parametrize("case", range(len(VALUE_CASES)))
def test_cpu_only_namespaces_match_torch(case):
    f = VALUE_CASES[case]
    kt, vt = outcome(f, torch)
    kf, vf = outcome(f, fg)
    assert kt == kf, (vt, vf)
    if kt == "raise":
        assert vt is vf
    elif vt is None or isinstance(vt, (bool, int, str, list, dict)):
        assert vt == vf


def test_cudnn_flags_are_remembered_and_validated():
    old = fg.backends.cudnn.benchmark
    try:
        fg.backends.cudnn.benchmark = True
        assert fg.backends.cudnn.benchmark is True
        fg.backends.cudnn.deterministic = True
        assert fg.backends.cudnn.deterministic is True
        with pytest.raises(RuntimeError, match="expects a bool"):
            fg.backends.cudnn.benchmark = 1
        with pytest.raises(RuntimeError):
            torch.backends.cudnn.benchmark = 1
        with fg.backends.cudnn.flags(enabled=False):
            assert fg.backends.cudnn.enabled is False
        assert fg.backends.cudnn.enabled is True
    finally:
        fg.backends.cudnn.benchmark = old
        fg.backends.cudnn.deterministic = False


def test_matmul_precision_and_tf32_flag_agree():
    try:
        for m in (torch, fg):
            m.backends.cuda.matmul.allow_tf32 = True
        assert fg.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "high"
        for m in (torch, fg):
            m.set_float32_matmul_precision("highest")
        assert fg.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is False
        with pytest.raises(AttributeError):
            fg.backends.cuda.matmul.nonexistent = 1
        with pytest.warns(UserWarning):
            fg.set_float32_matmul_precision("bogus")
    finally:
        torch.set_float32_matmul_precision("highest")
        fg.set_float32_matmul_precision("highest")


DEVICE_ARGS = [("cpu",), ("cuda",), ("cuda:0",), ("cuda:3",), ("cuda", 1), ("cpu", 0), ("meta",), ("mps",),
               ("xpu",), ("cuda", 0), ("foo",), ("CUDA",), (" cuda",), ("cuda:01",), ("cuda:x",), ("cuda:-1",),
               ("cuda", -1), ("cuda:0", 1), ("cuda", 1.0), ("cuda", "0"), (None,), (0.5,), (1,)]


@pytest.mark.parametrize("args", DEVICE_ARGS)
def test_device_parsing(args):
    kt, vt = outcome(lambda m: m.device(*args), torch)
    kf, vf = outcome(lambda m: m.device(*args), fg)
    assert kt == kf, (vt, vf)
    if kt == "raise":
        assert vt is vf
    else:
        assert (vt.type, vt.index, str(vt), repr(vt)) == (vf.type, vf.index, str(vf), repr(vf))


def test_device_comparison_hash_and_pickle():
    d = fg.device("cuda", 1)
    assert d == fg.device("cuda:1") and d != fg.device("cuda:0") and d != fg.device("cuda")
    assert (fg.device("cpu") == "cpu") is (torch.device("cpu") == "cpu") is False
    assert (fg.device("cpu") != "cpu") is (torch.device("cpu") != "cpu") is True
    assert len({fg.device("cpu"), fg.device("cpu"), fg.device("cuda:0")}) == 2
    assert pickle.loads(pickle.dumps(d)) == d
    assert fg.device(type="cuda", index=2) == fg.device("cuda:2")
    assert fg.device(fg.device("cuda:2")) == fg.device("cuda:2")
    assert fg.zeros(2).device == fg.device("cpu") and fg.zeros(2).get_device() == -1


PLACEMENT = [
    lambda m: m.zeros(2).cuda(),
    lambda m: m.zeros(2).cuda(0),
    lambda m: m.zeros(2).cuda(device="cpu"),
    lambda m: m.zeros(2).to("cuda"),
    lambda m: m.zeros(2).to("cuda:1"),
    lambda m: m.zeros(2).to(m.device("cuda")),
    lambda m: m.zeros(2).to(device="cuda"),
    lambda m: m.zeros(2).to("cuda", m.float64),
    lambda m: m.zeros(2).to(0),
    lambda m: m.zeros(2).to("mps"),
    lambda m: m.zeros(2).to("xpu"),
    lambda m: m.zeros(2).to("hip"),
    lambda m: m.zeros(2).to("cpu"),
    lambda m: m.zeros(2).to("cpu:0"),
    lambda m: m.zeros(2, device="cuda"),
    lambda m: m.ones(2, device="cuda:0"),
    lambda m: m.zeros(1, device=0),
    lambda m: m.tensor([1.0], device="cuda"),
    lambda m: m.randn(2, device="cuda"),
    lambda m: m.arange(3, device="cuda"),
    lambda m: m.full((2,), 1.0, device="cuda"),
    lambda m: m.zeros_like(m.zeros(2), device="cuda"),
    lambda m: m.zeros(2).pin_memory(),
    lambda m: m.nn.Linear(2, 2).cuda(),
    lambda m: m.nn.Linear(2, 2).to("cuda"),
    lambda m: m.Generator(device="cuda"),
]


@pytest.mark.parametrize("case", range(len(PLACEMENT)))
def test_placement_errors_match_cpu_build(case):
    kt, vt = outcome(PLACEMENT[case], torch)
    kf, vf = outcome(PLACEMENT[case], fg)
    assert kt == kf, (vt, vf)
    if kt == "raise":
        assert vt is vf


def test_common_script_preamble_runs():
    device = fg.device("cuda" if fg.cuda.is_available() else "cpu")
    model = fg.nn.Linear(3, 1).to(device)
    x = fg.randn(4, 3, device=device)
    assert model(x).shape == (4, 1)
    assert str(device) == "cpu"
    assert fg.accelerator.current_accelerator() is None
