"""Starting, watching, verifying and stopping servers on this machine.

- ``machine``: what this machine is (hardware ``local``);
- ``launch_plan``: the processes a run starts, as typed data, and its hash;
- ``local_model``: the minimal plan for a model no recipe names (a local model directory);
- ``prelaunch``: the checks a plan passes before anything is spawned (lint, fit);
- ``docker_form``: the exact ``docker run`` commands of a plan;
- ``records``: runs recorded under servekit's home;
- ``spawn`` / ``readiness`` / ``stop``: one process group per run, its startup phases, its end;
- ``probes`` / ``metrics`` / ``startup_facts`` / ``prediction``: what ``verify`` checks and compares;
- ``evidence`` / ``recipe_verified``: what a verify leaves behind;
- ``up``: the whole road from plan to endpoint.
"""
