"""The application layer: one pipeline each for plan, fit and warm-cache, which the CLI, the
Python API and the JSON API call. Surfaces parse arguments and render results; the steps in
between (resolve, synthesize, translate, check) live here once."""
