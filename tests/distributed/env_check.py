"""Prints this rank's torchrun variables as JSON (one line per rank) after a barrier."""
import json
import os

import funcgrad.distributed as dist

dist.init_process_group("gloo")
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
        "OMP_NUM_THREADS", "TORCHELASTIC_RUN_ID"]
info = {k: os.environ.get(k) for k in keys}
info.update(rank=dist.get_rank(), world=dist.get_world_size(), elastic=dist.is_torchelastic_launched())
objs = [None] * dist.get_world_size()
dist.all_gather_object(objs, info)
if dist.get_rank() == 0:
    print(json.dumps(objs), flush=True)
