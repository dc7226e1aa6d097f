"""torch.Stream / torch.Event (device-generic, CPU), torch.cpu's stream names, and torch.jit.fork / wait, against
torch 2.13's CPU behaviour (exact expectations; compared with torch where it is installed)."""
import pytest

import funcgrad as torch


def test_stream_on_cpu():
    s = torch.Stream()
    assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
    assert (s.device_type, s.device_index, s.stream_id, s.query()) == ("cpu", -1, 0, True)
    assert s == torch.Stream() and hash(s) == hash(torch.Stream(device="cpu", priority=0))
    s.synchronize()
    s.wait_event(torch.Event())
    with s as entered:
        assert entered is s
    for call in (lambda: s.wait_stream(s), s.record_event):
        with pytest.raises(RuntimeError, match=r"^cpu backend doesn't support events.$"):
            call()
    with pytest.raises(RuntimeError, match="PyTorch is not linked with support for cuda devices"):
        torch.Stream(device="cuda")
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        torch.Stream(1)


def test_event_on_cpu():
    e = torch.Event()
    assert repr(e) == "torch.Event device_type=cpu, device_index=-1, event_flag=0, event_id=0"
    assert repr(torch.Event(enable_timing=True)).endswith("event_flag=1, event_id=0")
    assert e.query() is True and e.device == torch.device("cpu")
    e.synchronize()
    e.wait()
    with pytest.raises(RuntimeError, match=r"^cpu backend doesn't support events.$"):
        e.record()
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'."):
        e.elapsed_time(torch.Event(enable_timing=True))
    t = torch.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time."):
        t.elapsed_time(t)
    with pytest.raises(RuntimeError, match="PyTorch is not linked with support for cuda devices"):
        torch.Event(device="cuda")


def test_cpu_stream_names():
    cs = torch.cpu.current_stream()
    assert cs is torch.cpu.current_stream()
    assert torch.cpu.Stream().record_event() is None and torch.cpu.Stream().wait_event(None) is None
    with torch.cpu.stream(cs) as entered:
        assert entered is cs
    assert torch.cpu.synchronize() is None


def test_cuda_stream_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="torch.cuda.Stream requires CUDA support"):
        torch.cuda.Stream()
    with pytest.raises(RuntimeError, match="Tried to instantiate dummy base class Event"):
        torch.cuda.Event(enable_timing=True)


@pytest.mark.filterwarnings("ignore:`torch.jit")
def test_fork_wait():
    with pytest.warns(DeprecationWarning, match="`torch.jit.fork` is deprecated. Please use `torch.compile` instead."):
        torch.jit.fork(lambda: 0)
    with pytest.warns(DeprecationWarning, match="`torch.jit.wait` is deprecated. Please use `torch.compile` instead."):
        torch.jit.wait(torch.fork(lambda: 0))
    fut = torch.jit.fork(lambda x, k=1: x * 2 + k, torch.ones(2), k=3)
    assert isinstance(fut, torch.jit.Future) and fut.done()
    assert torch.jit.wait(fut).tolist() == [5.0, 5.0]
    assert torch.wait(torch.fork(lambda: 7)) == 7
    assert torch.jit.Future is torch.futures.Future

    def boom():
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):  # eager fork runs at once, as torch's
        torch.jit.fork(boom)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        torch.jit.wait(3)

    @torch.jit.script
    def parallel(x):
        futs = [torch.jit.fork(torch.neg, x) for _ in range(3)]
        return sum(torch.jit.wait(f) for f in futs)
    assert parallel(torch.ones(2)).tolist() == [-3.0, -3.0]


@pytest.mark.filterwarnings("ignore:`torch.jit")
def test_against_torch():
    real = pytest.importorskip("torch")
    if not hasattr(real, "Stream"):
        pytest.skip("torch without torch.Stream")
    assert repr(real.Stream()) == repr(torch.Stream())
    assert repr(real.Event(enable_timing=True)) == repr(torch.Event(enable_timing=True))
    for ours, theirs in ((torch.Event().record, real.Event().record),
                         (lambda: torch.Stream(device="cuda"), lambda: real.Stream(device="cuda"))):
        with pytest.raises(Exception) as a:
            ours()
        with pytest.raises(Exception) as b:
            theirs()
        assert (type(a.value), str(a.value)) == (type(b.value), str(b.value))
    assert real.jit.wait(real.jit.fork(lambda: 4)) == torch.jit.wait(torch.jit.fork(lambda: 4))
