"""Each hardware choice's fit verdict (``servekit.app.hardware_fit``) is the verdict of the fit
checks ``servekit plan`` gives the same request on that hardware (the builder page marks its
hardware choices with it). The bundled catalog and the model facts that ship for it."""

from __future__ import annotations

import pytest

from servekit.app.hardware_fit import fits_on
from servekit.app.overridden import plan_with_overrides
from servekit.app.request import PlanRequest, load_documents
from servekit.synthesis.overrides import Overrides

SEED = "Qwen/Qwen3.8-27B"
HARDWARE = ("h100", "rtx_5090", "rtx_5090_2x", "b200", "dgx_spark_gb10")


def plan_fits(request: PlanRequest, hardware: str) -> bool:
    result = plan_with_overrides(PlanRequest(request.model, hardware=hardware, features=request.features,
                                             documents=request.documents), request.overrides)
    return all(check["fits"] for check in result.checks["fit"])


@pytest.mark.parametrize("overrides", [Overrides(), Overrides(tp=1), Overrides(max_model_len="16384"),
                                       Overrides(gpu_memory_utilization=0.5)], ids=repr)
def test_each_hardware_gets_the_verdict_plan_gives(overrides):
    docs = load_documents(None)
    request = PlanRequest(SEED, features=("spec_decoding",), documents=docs, overrides=overrides)
    verdicts = fits_on(docs, request, SEED, None, HARDWARE)
    assert set(verdicts) == set(HARDWARE)
    for hardware in HARDWARE:
        assert verdicts[hardware] == plan_fits(request, hardware), hardware
    assert any(verdicts.values()) or overrides.gpu_memory_utilization  # the sample is not all refusals


def test_a_request_with_no_plan_on_a_hardware_is_unknown():
    docs = load_documents(None)
    request = PlanRequest(SEED, variant="ascend_w8a8", documents=docs)
    assert fits_on(docs, request, SEED, "ascend_w8a8", ["rtx_5090"]) == {"rtx_5090": None}
