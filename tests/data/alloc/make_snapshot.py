#!/usr/bin/env python3
"""Writes memory-snapshot pickles in the format torch.cuda.memory._dump_snapshot uses, for the
alloc_* tests (no torch needed). Layout of the dict: pytorch/pytorch torch/csrc/cuda/Module.cpp
(THCPModule_memorySnapshot) and torch/cuda/memory.py (_snapshot docstring).

usage: make_snapshot.py OUT PROTOCOL KIND
KIND:
  frag      the fragmentation OOM of tests/alloc_sim_test.cpp as PyTorch would trace it:
            50 MiB and 48 MiB segments, the 50 MiB one reused for 12 MiB (38 MiB split off),
            the 48 MiB one released by the OOM retry, then a 60 MiB request fails with 50 MiB free.
  many      5000 small alloc/free pairs (several 64 KiB pickle frames), no OOM
  graph     a CUDA-graph private pool: segments with segment_pool_id (0, 1)
  ordered   frag, but allocator_settings is a collections.OrderedDict
  deep      a list nested 100 deep
  global    a reference to os.system (GLOBAL / STACK_GLOBAL)
  reduce    a collections.Counter() (REDUCE of a name that is not allow-listed)
  set       a snapshot containing a set (EMPTY_SET opcode)
  proto0    frag with the text protocol 0
"""
import collections
import os
import pickle
import sys

MiB = 1 << 20
SIZE_MAX = (1 << 64) - 1
BASE = 0x7F3A00000000


def settings(conf="", max_split_size=SIZE_MAX):
    return {
        "PYTORCH_CUDA_ALLOC_CONF": conf,
        "max_split_size": max_split_size,
        "garbage_collection_threshold": 0.0,
        "expandable_segments": False,
        "pinned_num_register_threads": 1,
        "release_lock_on_cudamalloc": False,
        "pinned_use_cuda_host_register": False,
        "roundup_power2_divisions": {str(1 << k): 0 for k in range(16)},
    }


def frames(name, line):
    # innermost first, as PyTorch gathers them; torch-internal frames before the user's
    return [
        {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"},
        {"filename": "/srv/app/model.py", "line": line, "name": name},
        {"filename": "/srv/app/main.py", "line": 7, "name": "<module>"},
    ]


def entry(action, addr, size, fr, t, stream=0):
    e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t}
    if fr is not None:
        e["frames"] = fr
    return e


def frag():
    a, b = BASE, BASE + 64 * MiB
    f_load = frames("load_weights", 40)  # one list object: the memo shares it
    f_tmp = frames("scratch", 52)
    f_big = frames("prefill", 77)
    t = 1_700_000_000_000_000
    trace = [
        entry("segment_alloc", a, 50 * MiB, f_load, t + 1),
        entry("alloc", a, 50 * MiB, f_load, t + 2),
        entry("segment_alloc", b, 48 * MiB, f_load, t + 3),
        entry("alloc", b, 48 * MiB, f_load, t + 4),
        entry("free_requested", a, 50 * MiB, f_load, t + 5),
        entry("free_completed", a, 50 * MiB, f_load, t + 5),
        entry("alloc", a, 12 * MiB, f_tmp, t + 6),
        entry("free_requested", b, 48 * MiB, f_load, t + 7),
        entry("free_completed", b, 48 * MiB, f_load, t + 7),
        entry("segment_free", b, 48 * MiB, f_big, t + 8),
    ]
    trace.append({"action": "oom", "device_free": 50 * MiB, "size": 60 * MiB, "stream": 0, "time_us": t + 9, "frames": f_big})
    seg = {
        "device": 0, "address": a, "total_size": 50 * MiB, "allocated_size": 12 * MiB, "active_size": 12 * MiB,
        "requested_size": 12 * MiB, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
        "is_expandable": False, "frames": f_load,
        "blocks": [
            {"address": a, "size": 12 * MiB, "requested_size": 12 * MiB, "state": "active_allocated", "frames": f_tmp},
            {"address": a + 12 * MiB, "size": 38 * MiB, "requested_size": 0, "state": "inactive", "frames": []},
        ],
    }
    return {"segments": [seg], "device_traces": [trace], "allocator_settings": settings(), "external_annotations": []}


def many():
    t = 1_700_000_000_000_000
    trace = []
    fr = frames("decode_step", 90)
    seg_addr = BASE
    trace.append(entry("segment_alloc", seg_addr, 2 * MiB, fr, t))
    for i in range(5000):
        size = 512 * (1 + i % 7)
        trace.append(entry("alloc", seg_addr, size, fr, t + 2 * i))
        trace.append(entry("free_requested", seg_addr, size, fr, t + 2 * i + 1))
        trace.append(entry("free_completed", seg_addr, size, fr, t + 2 * i + 1))
    seg = {"device": 0, "address": seg_addr, "total_size": 2 * MiB, "allocated_size": 0, "active_size": 0,
           "requested_size": 0, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": fr,
           "blocks": [{"address": seg_addr, "size": 2 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    return {"segments": [seg], "device_traces": [trace], "allocator_settings": settings("max_split_size_mb:128", 128 * MiB)}


def graph():
    # Capture on stream 0x55 into pool (0, 1): 12 MiB transient freed, 4 MiB output kept.
    t = 1_700_000_000_000_000
    g = BASE + 256 * MiB
    fr = frames("capture_one_batch_size", 300)
    trace = [
        entry("segment_alloc", g, 12 * MiB, fr, t, stream=0x55),
        entry("alloc", g, 12 * MiB, fr, t + 1, stream=0x55),
        entry("free_requested", g, 12 * MiB, fr, t + 2, stream=0x55),
        entry("free_completed", g, 12 * MiB, fr, t + 2, stream=0x55),
        entry("alloc", g, 4 * MiB, fr, t + 3, stream=0x55),
    ]
    seg = {"device": 0, "address": g, "total_size": 12 * MiB, "allocated_size": 4 * MiB, "active_size": 4 * MiB,
           "requested_size": 4 * MiB, "stream": 0x55, "segment_type": "large", "segment_pool_id": (0, 1),
           "is_expandable": False, "frames": fr,
           "blocks": [{"address": g, "size": 4 * MiB, "requested_size": 4 * MiB, "state": "active_allocated", "frames": fr},
                      {"address": g + 4 * MiB, "size": 8 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    return {"segments": [seg], "device_traces": [trace], "allocator_settings": settings()}


def main():
    out, protocol, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if kind == "frag":
        obj = frag()
    elif kind == "many":
        obj = many()
    elif kind == "graph":
        obj = graph()
    elif kind == "ordered":
        obj = frag()
        obj["allocator_settings"] = collections.OrderedDict(obj["allocator_settings"])
    elif kind == "deep":
        obj = []
        for _ in range(100):
            obj = [obj]
    elif kind == "global":
        obj = {"segments": [], "hook": os.system}
    elif kind == "reduce":
        obj = {"segments": [], "counts": collections.Counter(a=1)}
    elif kind == "set":
        obj = {"segments": [], "device_traces": [], "tags": {1, 2}}
    elif kind == "proto0":
        obj = frag()
    else:
        raise SystemExit("unknown kind " + kind)
    with open(out, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


if __name__ == "__main__":
    main()
