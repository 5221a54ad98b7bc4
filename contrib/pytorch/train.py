#!/usr/bin/env python3
"""train.py - a small PyTorch training loop that follows Saturn's job-side
contract (saturn-run(1)):

  * technique from SATURN_TECHNIQUE: "ddp" -> DistributedDataParallel,
    "fsdp" -> FullyShardedDataParallel (SATURN_FSDP_CPU_OFFLOAD,
    SATURN_FSDP_ACTIVATION_CHECKPOINTING), anything else -> one process;
    ranks come from torchrun (saturn-run's launch line for ddp/fsdp);
  * total work from SATURN_BATCHES, resume from SATURN_RESUME_BATCH and a
    checkpoint file (--checkpoint);
  * progress: rank 0 writes "SATURN_PROGRESS batches_done=N sec_per_batch=X"
    lines to the FIFO named in SATURN_PROGRESS_PIPE;
  * SIGUSR1: save a checkpoint, write "SATURN_CHECKPOINTED batch=N", exit;
  * CUDA out of memory: "SATURN_OOM reason=..." and exit status 3.

Runs on CPU with the gloo backend when there is no GPU.
"""
import argparse
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

ckpt_requested = False


def on_usr1(signum, frame):
    global ckpt_requested
    ckpt_requested = True


class Progress:
    """The few lines a training script needs to report progress."""

    def __init__(self, rank):
        path = os.environ.get("SATURN_PROGRESS_PIPE")
        self.f = open(path, "w", buffering=1) if (path and rank == 0) else None

    def send(self, line):
        if self.f:
            self.f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--batches", type=int, default=int(os.environ.get("SATURN_BATCHES", "100")))
    args = ap.parse_args()

    technique = os.environ.get("SATURN_TECHNIQUE", "single")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    cuda = torch.cuda.is_available()
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}" if cuda else "cpu")
    signal.signal(signal.SIGUSR1, on_usr1)
    progress = Progress(rank)

    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    model = nn.Sequential(*layers).to(device)
    start = int(os.environ.get("SATURN_RESUME_BATCH", "0"))
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, map_location=device)
        model.load_state_dict(state["model"])
        start = max(start, state["batch"])
    if world > 1 and technique == "fsdp":
        from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP
        offload = os.environ.get("SATURN_FSDP_CPU_OFFLOAD", "0") == "1"
        model = FSDP(model, cpu_offload=CPUOffload(offload_params=offload))
    elif world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    per_rank = max(1, args.batch_size // world)

    batch = start
    try:
        while batch < args.batches:
            t0 = time.perf_counter()
            x = torch.randn(per_rank, args.hidden, device=device)
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            batch += 1
            progress.send(f"SATURN_PROGRESS batches_done={batch} batches_total={args.batches} "
                          f"sec_per_batch={time.perf_counter() - t0:.6f}")
            stop = torch.tensor([1 if ckpt_requested else 0])
            if world > 1:
                dist.all_reduce(stop)
            if stop.item():
                state = model.state_dict()
                if rank == 0 and args.checkpoint:
                    torch.save({"model": state, "batch": batch}, args.checkpoint)
                progress.send(f"SATURN_CHECKPOINTED batch={batch}")
                break
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
        if "out of memory" in str(e):
            progress.send(f"SATURN_OOM reason={str(e).splitlines()[0][:200]}")
            sys.exit(3)
        raise
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
