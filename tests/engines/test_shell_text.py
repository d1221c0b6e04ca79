"""Shell lines read as the shell reads them: commands, redirections, prefixes and exported env."""

from __future__ import annotations

import pytest

from servekit.engines.common.shell_text import split_shell_text, split_shell_words
from servekit.engines.lint import lint_shell
from servekit.engines.shell_lint import lint_shell_text
from servekit.errors import ServekitError


def _words(text: str) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    return [(c.words, dict(c.env)) for c in split_shell_text(text)]


@pytest.mark.parametrize("text", [
    "vllm serve m &",
    "vllm serve m > log 2>&1",
    "vllm serve m >> log 2> err < /dev/null",
    "nohup vllm serve m > log 2>&1 &",
    "vllm serve m &> log",
    "exec vllm serve m >log",
    "vllm serve m \\\n  # a comment\n",
])
def test_operators_and_redirections_are_not_arguments(text: str) -> None:
    assert _words(text) == [(("vllm", "serve", "m"), {})]


def test_env_assignments_exports_and_env_program_become_the_command_env() -> None:
    assert _words("export A=1 B=2 && C=3 vllm serve m") == [(("vllm", "serve", "m"), {"A": "1", "B": "2", "C": "3"})]
    assert _words("env X=1 vllm serve m; vllm serve n") == [
        (("vllm", "serve", "m"), {"X": "1"}), (("vllm", "serve", "n"), {})]


def test_separators_split_commands_and_quotes_keep_operators() -> None:
    got = _words("cd /x && vllm serve m --compilation-config '{\"a\": \"x|y&z\"}' | tee log || echo fail")
    assert [w for w, _ in got] == [("cd", "/x"), ("vllm", "serve", "m", "--compilation-config", '{"a": "x|y&z"}'),
                                   ("tee", "log"), ("echo", "fail")]


def test_words_already_split_by_a_shell() -> None:
    got = split_shell_words(["nohup", "vllm", "serve", "m", ">", "log", "2>&1", "&"])
    assert [c.words for c in got] == [("vllm", "serve", "m")]


def test_unclosed_quote_is_a_clear_error() -> None:
    with pytest.raises(ServekitError, match="quote is not closed"):
        split_shell_text("vllm serve 'm")


def test_lint_checks_each_engine_command_and_notes_the_others() -> None:
    result = lint_shell("vllm", None, "export X=1 && nohup vllm serve m --max-model-len 8192 > log 2>&1 &")
    assert result.valid and not result.findings
    result = lint_shell("vllm", None, "cd /srv; vllm serve m --bogus-flag | tee log")
    assert [f.code for f in result.findings] == ["unknown-option", "ignored-command", "ignored-command"]


def test_a_line_without_engine_command_is_an_error() -> None:
    with pytest.raises(ServekitError, match="no engine command"):
        lint_shell_text("cd /x && echo hi", None, None, lambda argv: "vllm")


def test_two_engine_commands_are_both_checked() -> None:
    result = lint_shell("vllm", None, "vllm serve a --tpp 2 & vllm serve b --max-model-len x")
    assert [f.code for f in result.errors] == ["unknown-option", "bad-type"]
    assert result.errors[1].message.startswith("command 2")
