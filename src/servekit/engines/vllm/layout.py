"""How many devices one ``vllm serve`` process drives on its node, read from its argv.

vLLM's rules (vllm 0.32: ``vllm/config/parallel.py`` ``ParallelConfig.world_size`` and
``vllm/engine/arg_utils.py`` ``EngineArgs.create_engine_config``):

* one data-parallel replica spans TP x PP x PCP ranks (``--prefill-context-parallel-size``);
  decode-context parallelism (``--decode-context-parallel-size``) reuses the TP ranks;
* with ``--nnodes N`` (the multiprocessing backend over several nodes) the whole world,
  DP x TP x PP x PCP, is split evenly over the N nodes;
* on one node, the process runs ``--data-parallel-size-local`` replicas when given (0: an API
  front end with no engine), one when it is an external-load-balancer rank
  (``--data-parallel-rank``), else every replica of ``--data-parallel-size``.
"""

from __future__ import annotations

from collections.abc import Sequence

from servekit.engines.vllm.launch import parse_vllm_argv
from servekit.records import record


@record
class ParallelLayout:
    """The parallel sizes a vLLM launch asks for (tensor, pipeline, context, data) and its nodes."""

    tp: int = 1
    pp: int = 1
    pcp: int = 1
    dp: int = 1
    dp_local: int | None = None
    nnodes: int = 1
    external_rank: bool = False
    """``--data-parallel-rank`` given: this process is one replica behind an external balancer."""

    @property
    def replica_ranks(self) -> int:
        """Devices of one data-parallel replica: TP x PP x PCP."""
        return self.tp * self.pp * self.pcp

    @property
    def local_replicas(self) -> int:
        """Data-parallel replicas this process runs on its own node (single-node launch)."""
        if self.dp_local is not None:
            return self.dp_local
        return 1 if self.external_rank else self.dp

    @property
    def devices_per_node(self) -> int:
        """Devices the process drives on its node."""
        if self.nnodes > 1:
            return self.dp * self.replica_ranks // self.nnodes
        return self.local_replicas * self.replica_ranks

    def describe(self) -> str:
        """``TP 4 x PP 2`` / ``DP-local 8 x TP 1`` / ``TP 16 over 2 nodes``: how the count arises."""
        sizes = f"TP {self.tp}" + (f" x PP {self.pp}" if self.pp > 1 else "") + (
            f" x PCP {self.pcp}" if self.pcp > 1 else "")
        if self.nnodes > 1:
            dp = f"DP {self.dp} x " if self.dp > 1 else ""
            return f"{dp}{sizes} over {self.nnodes} nodes"
        replicas = self.local_replicas
        if replicas == 1 and self.dp == 1:
            return sizes
        return f"DP-local {replicas} x {sizes}"


_SIZES = {
    "--tensor-parallel-size": "tp",
    "--pipeline-parallel-size": "pp",
    "--prefill-context-parallel-size": "pcp",
    "--data-parallel-size": "dp",
    "--data-parallel-size-local": "dp_local",
    "--nnodes": "nnodes",
}


def parallel_layout(argv: Sequence[str]) -> ParallelLayout:
    """The parallel sizes of a vLLM launch (the last occurrence of a flag wins, as in argparse)."""
    launch = parse_vllm_argv([str(t) for t in argv], strict=False)
    sizes = {field: launch.get_int(flag) for flag, field in _SIZES.items()}
    given = {field: value for field, value in sizes.items() if value is not None}
    return ParallelLayout(**given, external_rank=launch.has("--data-parallel-rank"))
