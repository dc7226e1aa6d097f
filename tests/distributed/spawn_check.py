"""The tutorial pattern: the script starts its own workers with mp.spawn and each joins with
init_process_group("gloo", rank=rank, world_size=N) after setting MASTER_ADDR/MASTER_PORT itself.
Usage: python spawn_check.py N PORT. Prints 'spawn ok N' from rank 0."""
import os
import sys

import numpy as np

import funcgrad as torch
import funcgrad.distributed as dist
import funcgrad.multiprocessing as mp


def main(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    assert dist.get_rank() == rank and dist.get_world_size() == world_size
    t = torch.tensor([float(rank + 1)] * 3)
    dist.all_reduce(t)
    np.testing.assert_allclose(t.numpy(), world_size * (world_size + 1) / 2)
    dist.destroy_process_group()
    if rank == 0:
        print("spawn ok", world_size, flush=True)


if __name__ == "__main__":
    n, port = int(sys.argv[1]), int(sys.argv[2])
    mp.spawn(main, args=(n, port), nprocs=n, join=True)
