"""TORCH_DISTRIBUTED_DEBUG=DETAIL: ProcessGroupWrapper compares every
collective's fingerprint across ranks and raises on each rank, naming the
first rank whose fingerprint differs from its own. The ranks in step all
name the odd one out; it names one of them. The incident is that rank's
(and its host's), not the first logger's."""
from conftest import diagnose_path

# ProcessGroupWrapper.cpp: "Detected mismatch between collectives on ranks.
# Rank <self> is running collective: <fp>, but Rank <other> is running
# collective: <fp>." then compute_collective_diff's aspects; the fingerprint
# of a collective without tensors prints "SequenceNumber=NOpType=X".
REDUCE = ("CollectiveFingerPrint(SequenceNumber={seq}, OpType=ALLREDUCE, TensorShape=[25], TensorDtypes=Float, "
          "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), "
          "requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))")
BROADCAST = "CollectiveFingerPrint(SequenceNumber={seq}OpType=BROADCAST)"


def mismatch_line(rank, other, mine, theirs, seq=485):
    return (f"[rank{rank}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {rank} is running "
            f"collective: {mine.format(seq=seq)}, but Rank {other} is running collective: {theirs.format(seq=seq)}."
            "Collectives differ in the following aspects:   Op type: ALLREDUCEvs BROADCAST\n")


def write_job(root, odd, ranks=8, per_host=4):
    """Each host's log of its ranks' errors; rank `odd` ran a broadcast
    where the others ran an all_reduce."""
    first_other = 0 if odd != 0 else 1
    for h in range(ranks // per_host):
        d = root / f"gpu-n{h:02d}"
        d.mkdir(parents=True)
        lines = []
        for r in range(h * per_host, (h + 1) * per_host):
            lines.append(f"[rank{r}]: step 120 loss 2.31\n")
            if r == odd:
                lines.append(mismatch_line(r, first_other, BROADCAST, REDUCE))
            else:
                lines.append(mismatch_line(r, odd, REDUCE, BROADCAST))
        (d / "train.log").write_text("".join(lines))


def test_the_rank_the_others_name_is_the_initiating_rank(faultline_bin, validate, tmp_path):
    write_job(tmp_path, odd=6)
    incs = diagnose_path(faultline_bin, validate, tmp_path)
    assert incs and incs[0]["rule"] == "collective-desync-stuck", [i["rule"] for i in incs]
    init = incs[0]["initiating"]
    assert (init.get("rank"), init.get("host")) == (6, "gpu-n01"), init


def test_rank_zero_named_by_the_others(faultline_bin, validate, tmp_path):
    # The odd rank is the one that logs first: it names rank 1, the other
    # seven name it.
    write_job(tmp_path, odd=0)
    incs = diagnose_path(faultline_bin, validate, tmp_path)
    assert incs and incs[0]["rule"] == "collective-desync-stuck", [i["rule"] for i in incs]
    init = incs[0]["initiating"]
    assert (init.get("rank"), init.get("host")) == (0, "gpu-n00"), init
