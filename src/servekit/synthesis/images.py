"""What each serving image is, as data: one entry per image family, with the file it was read from.

A ``docker run`` form must match its image: ``vllm/vllm-openai`` starts ``vllm serve`` itself
(its ENTRYPOINT), so the model and flags follow the image name; ``quay.io/ascend/vllm-ascend``
has no entrypoint (its default command is a shell), so the whole ``vllm serve ...`` command
must be passed; ``vllm/vllm-tpu``'s entrypoint script runs whatever command it is given.
``container_command`` places a command for an image accordingly; an engine with images of its
own declares their facts beside it (``Engine.images``). An image no entry names gets
an explicit ``--entrypoint`` (the program's first word), which runs whatever the image's own
entrypoint is. ``user`` and ``home`` say where the Hugging Face cache lives inside
(``/root/.cache/huggingface`` for images that run as root).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any

from servekit.records import record

VLLM_DOCKER = "https://github.com/vllm-project/vllm/blob/main/docker/"
VLLM_DOCS = "https://github.com/vllm-project/vllm/blob/main/docs/getting_started/installation/"


@record
class ImageFacts:
    """What a family of engine container images runs and how it takes its arguments."""

    repositories: tuple[str, ...]
    """Repository names of the family (a registry host included where the name has one)."""
    entrypoint: tuple[str, ...]
    """The image's ENTRYPOINT; () for none."""
    command: tuple[str, ...]
    """The image's default CMD."""
    passes_command: bool
    """The entrypoint runs the arguments it is given as a command (none, or an exec wrapper)."""
    platforms: tuple[str, ...]
    """Hardware platforms the image's builds serve (``HardwareProfile.platform``)."""
    source: str
    shell: str = "/bin/bash"
    user: str = "root"
    home: str = "/root"
    workdir: str | None = None
    """The image's WORKDIR, where a relative path a command names is read from (None: not known)."""
    examples: str | None = None
    """Where the image keeps vLLM's ``examples/`` directory (chat templates), None: not carried or not known."""
    omni: bool = False
    """The image carries vLLM-Omni, which ``vllm serve --omni`` needs (vLLM's own images do not)."""

    def serves_with(self, program: Sequence[str]) -> bool:
        """The entrypoint is ``program`` itself, so only its arguments follow the image."""
        return bool(self.entrypoint) and tuple(program[:len(self.entrypoint)]) == self.entrypoint


IMAGES: tuple[ImageFacts, ...] = (
    ImageFacts(("vllm/vllm-openai",), ("vllm", "serve"), (), False, ("cuda",),
               VLLM_DOCKER + "Dockerfile (target vllm-openai: ENTRYPOINT [\"vllm\", \"serve\"]; it builds on "
               "stage vllm-base: WORKDIR /vllm-workspace, COPY examples examples)",
               workdir="/vllm-workspace", examples="/vllm-workspace/examples"),
    ImageFacts(("vllm/vllm-openai-rocm",), ("vllm", "serve"), (), False, ("rocm",),
               VLLM_DOCS + "gpu.rocm.inc.md (docker/Dockerfile.rocm builds an image with vllm serve as entrypoint); "
               + VLLM_DOCKER + "Dockerfile.rocm (ARG COMMON_WORKDIR=/app, WORKDIR ${COMMON_WORKDIR}; stage final: "
               "COPY --from=export_vllm /examples ${COMMON_WORKDIR}/vllm/examples)",
               workdir="/app", examples="/app/vllm/examples"),
    ImageFacts(("vllm/vllm-openai-cpu",), ("vllm", "serve"), (), False, ("cpu",),
               VLLM_DOCKER + "Dockerfile.cpu (target vllm-openai: ENTRYPOINT [\"vllm\", \"serve\"])"),
    ImageFacts(("vllm/vllm-openai-xpu",), ("vllm", "serve"), (), False, ("xpu",),
               VLLM_DOCKER + "Dockerfile.xpu (target vllm-openai: ENTRYPOINT [\"vllm\", \"serve\"]; it builds on "
               "stage vllm-base: WORKDIR /workspace/vllm, COPY . . of the source tree, whose .dockerignore keeps "
               "examples/)", workdir="/workspace/vllm", examples="/workspace/vllm/examples"),
    ImageFacts(("vllm/vllm-tpu",), ("/entrypoint.sh",), (), True, ("tpu",),
               "https://github.com/vllm-project/tpu-inference/blob/main/docker/Dockerfile and docker/entrypoint.sh "
               "(ENTRYPOINT /entrypoint.sh: exec \"$@\" when given a command, else the API server with $VLLM_ARGS)"),
    ImageFacts(("quay.io/ascend/vllm-ascend",), (), ("/bin/bash",), True, ("ascend",),
               "https://github.com/vllm-project/vllm-ascend/blob/main/Dockerfile (no ENTRYPOINT; CMD [\"/bin/bash\"])"),
    ImageFacts(("vllm/vllm-omni",), (), (), True, ("cuda",),
               "https://github.com/vllm-project/vllm-omni/blob/main/docker/Dockerfile.cuda (ENTRYPOINT [])", omni=True),
    ImageFacts(("vllm/vllm-omni-rocm",), (), (), True, ("rocm",),
               "https://github.com/vllm-project/vllm-omni/blob/main/docker/Dockerfile.rocm (FROM rocm/vllm-dev; "
               "WORKDIR /app; ENTRYPOINT [])", workdir="/app", omni=True),
    ImageFacts(("quay.io/ascend/vllm-omni",), (), (), True, ("ascend",),
               "https://github.com/vllm-project/vllm-omni/blob/main/docker/Dockerfile.npu (FROM a vllm-ascend image; "
               "ENTRYPOINT []); images listed at https://docs.vllm.ai/projects/vllm-omni/en/stable/getting_started/"
               "installation/npu/", workdir="/vllm-workspace/vllm-omni", omni=True),
    ImageFacts(("rocm/vllm", "rocm/vllm-dev"), (), ("/bin/bash",), True, ("rocm",),
               VLLM_DOCS + "gpu.rocm.inc.md (AMD's images: \"The entrypoint of this docker image is /bin/bash\")"),
)
_BY_REPOSITORY = {repo: facts for facts in IMAGES for repo in facts.repositories}


_DOMAIN = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]+)?/)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(_DOMAIN + _COMPONENT + r"(?:/" + _COMPONENT + r")*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
                        r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")
"""An image reference as Docker reads one (github.com/distribution/reference, reference.go)."""


def is_image_reference(text: str) -> bool:
    """``repository[:tag][@digest]`` as ``docker run`` accepts it (not ``docker pull x``, not upper case)."""
    return bool(_REFERENCE.fullmatch(text))


def repository_of(image: str) -> str:
    """``vllm/vllm-openai:v0.11.0`` -> ``vllm/vllm-openai`` (tag and digest dropped, ``docker.io/``
    and ``library/`` prefixes as Docker reads them)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[: len(name) - len(last[-1]) + last[-1].index(":")]
    for prefix in ("docker.io/", "index.docker.io/"):
        name = name.removeprefix(prefix)
    return name.removeprefix("library/")


def image_facts(image: str | None, more: Sequence[ImageFacts] = ()) -> ImageFacts | None:
    """The facts of ``image``'s family (``more``: an engine's own images, ``Engine.images``, first);
    None for an image no entry names."""
    if not image:
        return None
    repository = repository_of(image)
    return next((f for f in more if repository in f.repositories), None) or _BY_REPOSITORY.get(repository)


EXAMPLES = "examples/"
"""How a recipe names a file of vLLM's ``examples/`` directory (a chat template, a tool-parser
plugin): relative to a vLLM checkout, which is where vLLM's own image runs from."""


def under(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or lies inside it (both absolute and normalised)."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def in_image_path(facts: ImageFacts | None, path: str) -> str:
    """``path`` as a command run in the image must name it: a relative path into vLLM's
    ``examples/`` becomes the absolute path where the image keeps them, when its working directory
    would not find them there (``vllm/vllm-openai-rocm``: working directory /app, examples in
    /app/vllm/examples); any other path as given."""
    if facts is None or not facts.examples or not path.startswith(EXAMPLES):
        return path
    if under(posixpath.normpath(posixpath.join(facts.workdir or "/", path)), facts.examples):
        return path
    return posixpath.join(facts.examples, path.removeprefix(EXAMPLES))


def _in_image_word(facts: ImageFacts | None, word: Any) -> Any:
    if not isinstance(word, str):
        return word
    if word.startswith("--") and "=" in word:
        option, value = word.split("=", 1)
        moved = in_image_path(facts, value)
        return word if moved == value else f"{option}={moved}"
    return in_image_path(facts, word)


def in_image_words(image: str | None, words: Sequence[Any], more: Sequence[ImageFacts] = ()) -> tuple[Any, ...]:
    """``words`` with each path into vLLM's examples as the image must name it (``in_image_path``)."""
    facts = image_facts(image, more)
    return tuple(_in_image_word(facts, w) for w in words)


def moved_paths(image: str | None, words: Sequence[Any], more: Sequence[ImageFacts] = ()) -> tuple[str, ...]:
    """One line per word ``in_image_words`` changes: what it was, what the image's form says, and why."""
    facts = image_facts(image, more)
    out = []
    for word in words:
        moved = _in_image_word(facts, word)
        if moved != word and facts is not None:
            out.append(f"{word} -> {moved}: {image} keeps vLLM's examples at {facts.examples} (its working "
                       f"directory is {facts.workdir or '/'})")
    return tuple(out)


@record
class ContainerCommand:
    """What follows the ``docker run`` options: an ``--entrypoint`` override, then the words after the image."""

    entrypoint: str | None
    words: tuple[Any, ...]
    reason: str


def container_command(image: str | None, argv: Sequence[Any], program_length: int,
                      more: Sequence[ImageFacts] = ()) -> ContainerCommand:
    """Where ``argv`` (a program of ``program_length`` words, then its arguments) goes in a
    ``docker run`` of ``image``: after the image without the program when the image's entrypoint
    is that program; whole when the image runs the command it is given; else with the program's
    first word as ``--entrypoint`` and the rest after the image. Paths into vLLM's examples are
    written as the image keeps them (``in_image_path``)."""
    facts = image_facts(image, more)
    program = [str(w) for w in argv[:program_length]]
    argv = [*argv[:program_length], *(_in_image_word(facts, w) for w in argv[program_length:])]
    if facts is not None and facts.serves_with(program):
        return ContainerCommand(None, tuple(argv[len(facts.entrypoint):]), f"entrypoint {' '.join(facts.entrypoint)}")
    if facts is not None and facts.passes_command:
        return ContainerCommand(None, tuple(argv), "the image runs the command it is given")
    why = "its entrypoint is another program" if facts is not None else "its entrypoint is not known"
    return ContainerCommand(program[0] if program else None, tuple(argv[1:]), f"--entrypoint set: {why}")


def omni_repositories(platform: str) -> tuple[str, ...]:
    """The image families that carry vLLM-Omni for a platform."""
    return tuple(repo for f in IMAGES if f.omni and platform in f.platforms for repo in f.repositories)
