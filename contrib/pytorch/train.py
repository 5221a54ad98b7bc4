#!/usr/bin/env python3
"""train.py - a small PyTorch training loop that follows Saturn's job-side
contract (saturn-run(1)); tests/runner/pytorch-train.sh runs it on CPU and
contrib/gpu/gpu-check.sh on GPUs.

  * ranks: saturn-run starts one process per GPU for ddp and fsdp and gives
    each RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
    MASTER_PORT (saturn-run(1), LAUNCH OF RANKS; torchrun sets the same
    where a site's technique uses it); CUDA_VISIBLE_DEVICES lists all the
    job's GPUs and each rank takes GPU LOCAL_RANK. The process group is
    NCCL when CUDA is available, else gloo on the CPU;
  * technique from SATURN_TECHNIQUE: "fsdp" -> FullyShardedDataParallel
    (SATURN_FSDP_CPU_OFFLOAD), "ddp" -> DistributedDataParallel
    (SATURN_DDP_BUCKET_CAP_MB), both also on one rank when launched with
    ranks (MASTER_PORT set); any other technique on more than one rank ->
    DDP (pipeline is not implemented here), else one plain process;
  * data: global batch b is generated from (--seed, b) alone and split
    across the ranks by rank, so the data order depends on the global batch
    index only and a run can resume at another world size exactly where the
    last one stopped (ranks get equal shares when --batch-size is a multiple
    of the world size, and DDP's gradient mean is then the full batch's);
  * total work from SATURN_BATCHES (or --batches); the start from the
    checkpoint (--checkpoint) when there is one, else SATURN_RESUME_BATCH;
  * checkpoint: model, optimizer, the number of global batches done and
    rank 0's RNG state, gathered to full (unsharded) tensors, written by
    rank 0 to a new file in the same folder and renamed over the old one,
    so a reader sees the old checkpoint or the new one, never half of one;
    it loads at any world size of the same technique;
  * progress: rank 0 writes "SATURN_PROGRESS batches_done=N ..." lines to
    the FIFO named in SATURN_PROGRESS_PIPE, and with --batch-log FILE
    appends "batch=B world=W loss=L" for each completed global batch B
    (L: the mean loss over the whole global batch);
  * SIGUSR1 (any rank): at the end of the current batch all ranks agree to
    stop, rank 0 saves the checkpoint, writes "SATURN_CHECKPOINTED batch=N",
    and every rank exits 0;
  * SIGUSR2: every thread's Python stack on stderr (a hung rank);
  * CUDA out of memory: "SATURN_OOM reason=..." and exit status 3.
"""
import faulthandler
import os
import signal
import sys

ckpt_requested = False


def on_usr1(signum, frame):
    global ckpt_requested
    ckpt_requested = True


# Before importing torch, which takes seconds: a checkpoint request that
# arrives meanwhile must not kill the rank (SIGUSR1's default action).
signal.signal(signal.SIGUSR1, on_usr1)
# SIGUSR2 (saturn-run forwards it to every rank): where each thread is,
# on stderr -- for a rank that hangs
faulthandler.register(signal.SIGUSR2)

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402

FORMAT = "saturn-train/1"


class Progress:
    """The few lines a training script needs to report progress (rank 0)."""

    def __init__(self, rank, batch_log):
        path = os.environ.get("SATURN_PROGRESS_PIPE")
        self.f = open(path, "w", buffering=1) if (path and rank == 0) else None
        self.log = open(batch_log, "a", buffering=1) if (batch_log and rank == 0) else None

    def send(self, line):
        if self.f:
            self.f.write(line + "\n")

    def close(self):
        for f in (self.f, self.log):
            if f:
                f.close()

    def batch(self, b, world, loss):
        if self.log:
            self.log.write(f"batch={b} world={world} loss={loss:.6f}\n")


def global_batch(seed, b, size, dim, device, teacher):
    """Global batch b: a function of (seed, b) only, whatever the world."""
    g = torch.Generator().manual_seed(seed * (1 << 32) + b)
    x = torch.randn(size, dim, generator=g).to(device)
    return x, torch.tanh(x @ teacher)


def save_atomic(obj, path):
    """torch.save to a new file beside path, fsync, rename over path."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=32, help="global batch (all ranks)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--batch-log", default=None)
    ap.add_argument("--batch-sleep", type=float, default=0,
                    help="seconds to sleep after each batch (tests: a slower step)")
    ap.add_argument("--batches", type=int, default=int(os.environ.get("SATURN_BATCHES", "100") or 100))
    args = ap.parse_args()

    technique = os.environ.get("SATURN_TECHNIQUE", "single")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    if cuda:
        if local >= torch.cuda.device_count():
            sys.exit(f"train.py: rank {rank}: LOCAL_RANK={local} but only "
                     f"{torch.cuda.device_count()} GPU(s) visible "
                     f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})")
        torch.cuda.set_device(local)
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    # ddp/fsdp on one GPU still go through the process group and the
    # wrapper (a one-rank NCCL communicator), so that they measure what the
    # technique costs; torchrun-less runs without ranks stay plain
    distributed = world > 1 or ("MASTER_PORT" in os.environ
                                and technique in ("ddp", "fsdp"))
    if distributed:
        dist.init_process_group("nccl" if cuda else "gloo", init_method="env://",
                                rank=rank, world_size=world)
    use_fsdp = distributed and technique == "fsdp"
    if use_fsdp:
        try:
            from torch.distributed.fsdp import (CPUOffload, FullStateDictConfig,
                                                FullyShardedDataParallel as FSDP,
                                                StateDictType)
        except Exception as e:  # Debian 12's PyTorch 1.13 on Python 3.11
            sys.exit(f"train.py: fsdp: FullyShardedDataParallel unusable with "
                     f"PyTorch {torch.__version__}: {type(e).__name__}: {e}")
    progress = Progress(rank, args.batch_log)

    torch.manual_seed(args.seed)
    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.hidden, args.hidden), nn.ReLU()]
    layers.append(nn.Linear(args.hidden, args.hidden))
    model = nn.Sequential(*layers).to(device)
    teacher = (torch.randn(args.hidden, args.hidden,
                           generator=torch.Generator().manual_seed(args.seed + 1))
               / args.hidden ** 0.5).to(device)

    start = int(os.environ.get("SATURN_RESUME_BATCH", "0") or 0)
    state = None
    if args.checkpoint and os.path.exists(args.checkpoint):
        state = torch.load(args.checkpoint, map_location="cpu")
        if state.get("format") != FORMAT:
            sys.exit(f"train.py: {args.checkpoint}: not a {FORMAT} checkpoint")
        model.load_state_dict(state["model"])
        if rank == 0 and start not in (0, state["batch"]):
            print(f"train.py: SATURN_RESUME_BATCH={start} but the checkpoint holds "
                  f"batch {state['batch']}: continuing from the checkpoint",
                  file=sys.stderr)
        # the model matches the checkpoint, so that is where to continue
        start = state["batch"]
        torch.set_rng_state(state["rng"])
        if cuda and state.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(state["cuda_rng"])
    if use_fsdp:
        offload = os.environ.get("SATURN_FSDP_CPU_OFFLOAD", "0") == "1"
        model = FSDP(model, cpu_offload=CPUOffload(offload_params=offload),
                     device_id=device if cuda else None)
    elif distributed:
        bucket = int(os.environ.get("SATURN_DDP_BUCKET_CAP_MB", "25") or 25)
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[local] if cuda else None, bucket_cap_mb=bucket)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if state is not None and state.get("optim") is not None:
        if use_fsdp:
            opt.load_state_dict(FSDP.shard_full_optim_state_dict(state["optim"], model))
        else:
            opt.load_state_dict(state["optim"])
    state = None

    def checkpoint(batch):
        if use_fsdp:  # collectives: every rank takes part
            cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
                msd = model.state_dict()
            osd = FSDP.full_optim_state_dict(model, opt)
        else:
            msd = (model.module if distributed else model).state_dict()
            osd = opt.state_dict()
        if rank == 0:
            save_atomic({"format": FORMAT, "model": msd, "optim": osd, "batch": batch,
                         "world": world, "technique": technique, "seed": args.seed,
                         "rng": torch.get_rng_state(),
                         "cuda_rng": torch.cuda.get_rng_state() if cuda else None},
                        args.checkpoint)

    loss_fn = nn.MSELoss(reduction="sum")
    batch = start
    try:
        while batch < args.batches:
            t0 = time.perf_counter()
            x, y = global_batch(args.seed, batch, args.batch_size, args.hidden, device, teacher)
            x, y = x.tensor_split(world)[rank], y.tensor_split(world)[rank]
            # the sum over this rank's share, divided by the global sample
            # count: DDP's mean over ranks times world gives the full
            # batch's gradient whatever the shares
            loss = loss_fn(model(x), y) / (args.batch_size * args.hidden) * world
            opt.zero_grad()
            loss.backward()
            opt.step()
            # one collective per batch: the global loss and the stop vote
            red = torch.tensor([loss.item() / world, 1.0 if ckpt_requested else 0.0],
                               device=device)
            if distributed:
                dist.all_reduce(red)
            progress.batch(batch, world, red[0].item())
            batch += 1
            if args.batch_sleep > 0:
                time.sleep(args.batch_sleep)
            mem = (f" peak_mem_mb={torch.cuda.max_memory_allocated() / 2**20:.0f}"
                   if cuda else "")
            progress.send(f"SATURN_PROGRESS batches_done={batch} batches_total={args.batches} "
                          f"sec_per_batch={time.perf_counter() - t0:.6f}{mem}")
            if red[1].item() > 0:
                if args.checkpoint:
                    checkpoint(batch)
                    progress.send(f"SATURN_CHECKPOINTED batch={batch}")
                break
    except RuntimeError as e:  # torch.cuda.OutOfMemoryError is a RuntimeError
        if "out of memory" in str(e):
            progress.send(f"SATURN_OOM reason={str(e).splitlines()[0][:200]}")
            sys.exit(3)
        raise
    progress.close()
    if distributed:
        # All ranks are done once they pass the barrier; then leave without
        # tearing the process group down: with gloo (PyTorch 1.13) a rank
        # that frees its process group after rank 0, which hosts the
        # rendezvous store, has left spins for ever (seen about once in 10
        # runs on a loaded machine), and the kernel closes the sockets anyway.
        dist.barrier()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
