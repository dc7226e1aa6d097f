"""Failure modes under a launcher: `MODE` (argv[1]) on rank 1 while rank 0 waits in a collective.
raise: an exception; exit: sys.exit(3); kill: SIGKILL itself; mismatch: all_reduce of different sizes; late: arrives after the group's timeout;
late_async: the same while rank 0 waits on an all_reduce started with async_op=True.
The job must end within seconds, non-zero."""
import datetime
import os
import signal
import sys
import time

import funcgrad as torch
import funcgrad.distributed as dist

mode = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3 if mode.startswith("late") else 1800))
dist.barrier()
if mode == "mismatch":  # ranks pass different sizes: a clear error (then the job ends), not a hang
    dist.all_reduce(torch.ones(3 + 2 * dist.get_rank()))
if dist.get_rank() == 1:
    if mode == "raise":
        raise ValueError("rank 1 fails on purpose")
    if mode == "exit":
        sys.exit(3)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode.startswith("late"):  # arrives long after the group's 3 s timeout: rank 0's watchdog ends the job
        time.sleep(60)
if mode == "late_async":
    work = dist.all_reduce(torch.ones(3), async_op=True)
    time.sleep(1)  # the timeout counts from the start of the operation
    work.wait()
else:
    dist.all_reduce(torch.ones(3))  # rank 0 waits here for a rank that is gone
print("unreachable", flush=True)
