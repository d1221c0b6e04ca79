"""Predicted serving speed: output tokens/s, TTFT and TPOT of a launch, from rules with sources.

- ``constants``: every number the model uses that is not a device fact: fitted fractions and
  overheads (with the calibration points they were fitted on), engine limits, spec acceptance;
- ``shape``: what the model needs of a checkpoint (parameters, experts, KV bytes per token);
- ``terms``: the time of one engine step, term by term (weights, KV, compute, communication,
  overhead);
- ``predict``: a workload (input/output lengths, concurrency or request rate) on a launch ->
  throughput, TTFT and TPOT with the binding term;
- ``intervals``: the 80% interval rule; ``points``: lines of the perf-points schema;
- ``calibrate``: the fit of the constants and its leave-one-out and leave-one-model-out checks.
"""
