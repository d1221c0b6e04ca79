"""SGLang's upgrade table: what replaced a server option that a release stopped parsing (0.4 -> 0.5
moved several switches into backend choices). Each entry names the public page it is read from;
the stored catalogs decide when an option stops parsing (``release=None``: the table only explains).
"""

from __future__ import annotations

from servekit.engines.common.upgrade_table import RENAMED, OptionChange, UpgradeTable

OPTIONS = (
    OptionChange("--enable-flashinfer-mla", RENAMED, None, "https://github.com/sgl-project/sglang/pull/5480",
                 words=("--attention-backend", "flashinfer"),
                 why="the MLA switches became choices of --attention-backend"),
    OptionChange("--enable-flashmla", RENAMED, None, "https://github.com/sgl-project/sglang/pull/5480",
                 words=("--attention-backend", "flashmla"),
                 why="the MLA switches became choices of --attention-backend"),
    OptionChange("--disable-flashinfer", RENAMED, None, "https://github.com/sgl-project/sglang/pull/1380",
                 words=("--attention-backend", "triton")),
    OptionChange("--disable-flashinfer-sampling", RENAMED, None, "https://github.com/sgl-project/sglang/pull/1380",
                 words=("--sampling-backend", "pytorch")),
    OptionChange("--enable-ep-moe", RENAMED, None, "https://github.com/sgl-project/SpecForge/pull/246",
                 words=("--ep-size", "{--tp-size}"),
                 why="expert parallelism is asked for with its size; the old switch used the TP size"),
    OptionChange("--enable-deepep-moe", RENAMED, None, "https://github.com/THUDM/slime/pull/1344",
                 words=("--moe-a2a-backend", "deepep")),
)

TABLE = UpgradeTable(options=OPTIONS)
