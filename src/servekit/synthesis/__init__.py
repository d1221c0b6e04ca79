"""Selection and synthesis: catalog documents -> Selection -> Plan -> rendered commands.

- ``selection``: every default rule (hardware, variant, strategy, nodes, features, modes, KV gates)
- ``resolve``: user choices (or a complete batch request) + defaults -> ``plan.Selection``
- ``context``: the documents one selection reads, looked up once
- ``hardware``: layered hardware keys (exact id > generation > brand > default) and predicates
- ``args`` / ``env``: the serve process's arguments and environment, layered, with provenance
- ``shapes``: deploy shapes (single node, head + followers, PD pools + router, Mooncake shell)
- ``docker`` / ``install``: image per brand, ``docker run`` wrapping, install steps, min version
- ``synthesize``: Selection -> ``plan.Plan``; ``render``: Plan -> the reference rendering object
- ``shell``: quoting and splitting that round-trip; ``explain``: a plan in words; ``batch``: JSONL
"""
