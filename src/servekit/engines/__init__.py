"""Engines: one package per engine (``vllm``, ``qaic``, ``ascend``, ``max``) behind one interface
(``common.engine.Engine``) and one registry (``registry``); shared machinery in ``common``."""
