"""Starting, watching, verifying and stopping servers on this machine.

- ``machine``: what this machine is (hardware ``local``);
- ``launch_plan``: the processes a run starts (engines, router, companions), as typed data, and its hash;
- ``recipe_plan`` / ``companion_plan``: a recipe's plan as a launch plan, its router and companions included;
- ``local_model``: the minimal plan for a model no recipe names (a local model directory);
- ``prelaunch``: the checks a plan passes before anything is spawned (lint, fit);
- ``docker_run``: ``up --docker``: the plan's exact ``docker run`` command through the docker CLI;
- ``records``: runs recorded under servekit's home;
- ``wiring`` / ``programs``: a plan's processes bound to this machine (ports, placeholders, the
  programs from the engine's and the companions' environments);
- ``spawn`` / ``readiness`` / ``stop``: one process group per process, its startup phases, its end;
- ``probes`` / ``metrics`` / ``startup_facts`` / ``prediction``: what ``verify`` checks and compares;
- ``evidence`` / ``recipe_verified``: what a verify leaves behind;
- ``up``: the whole road from plan to endpoint.
"""
