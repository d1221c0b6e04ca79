"""Each test breaks the small valid catalog one way and checks the finding names the right
file, line and key path (and says how to fix it)."""

from __future__ import annotations

from catalog.conftest import RECIPE_PATH, MiniCatalog, line_of
from servekit.catalog.findings import Severity


def assert_at(finding, catalog: MiniCatalog, rel: str, line: int, key: str) -> None:
    assert finding.location.file == str(catalog.root / rel)
    assert finding.location.line == line, finding.render()
    assert finding.location.key() == key, finding.render()
    assert finding.fix


def test_valid_catalog_has_no_findings(mini):
    assert mini.findings() == []


def test_malformed_yaml_points_at_the_broken_line(mini):
    text = mini.replace(RECIPE_PATH, "  tasks: [text]\n", "  tasks: [text\n")
    finding = mini.only("malformed-yaml")
    assert finding.severity is Severity.ERROR
    assert finding.location.file == str(mini.root / RECIPE_PATH)
    # the scanner notices the unclosed flow list on the following line
    assert finding.location.line in (line_of(text, "tasks: [text"), line_of(text, "tasks: [text") + 1)
    assert "malformed YAML" in finding.message


def test_wrong_scalar_type(mini):
    text = mini.replace(RECIPE_PATH, "    vram_minimum_gb: 20\n", '    vram_minimum_gb: "lots"\n')
    finding = mini.only("wrong-type")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, '"lots"'), "variants.default.vram_minimum_gb")
    assert "expected" in finding.message and "'lots'" in finding.message


def test_unquoted_number_in_args_is_an_error(mini):
    text = mini.replace(RECIPE_PATH, '["--max-num-seqs", "8"]', '["--max-num-seqs", 8]')
    finding = mini.only("wrong-type")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, '"--max-num-seqs", 8]'),
        "variants.fp8.hardware_overrides.hopper.extra_args[1]",
    )
    assert "quote" in finding.fix


def test_missing_required_key_points_at_its_parent(mini):
    text = mini.replace(RECIPE_PATH, '  title: "Model"\n', "")
    finding = mini.only("missing-key")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "meta:"), "meta.title")
    assert "title" in finding.message


def test_unknown_key_is_a_warning_at_the_key(mini):
    text = mini.replace(RECIPE_PATH, "    precision: bf16\n", "    precision: bf16\n    precison_note: x\n")
    finding = mini.only("unknown-key")
    assert finding.severity is Severity.WARNING
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "precison_note"), "variants.default.precison_note")
    assert not any(f.is_error for f in mini.findings())


def test_unknown_layered_hardware_key(mini):
    text = mini.replace(RECIPE_PATH, "      hopper:\n", "      hoper:\n")
    finding = mini.only("unknown-hardware")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "hoper:"), "variants.fp8.hardware_overrides.hoper")
    assert "did you mean 'hopper'" in finding.message


def test_generation_where_an_exact_profile_is_required(mini):
    text = mini.replace(RECIPE_PATH, "    h200: verified\n", "    hopper: unsupported\n")
    finding = mini.only("unknown-hardware")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "hopper: unsupported"), "meta.hardware.hopper")
    assert "is a generation" in finding.message and finding.is_error


def test_unknown_profile_marked_verified_is_only_a_warning(mini):
    mini.replace(RECIPE_PATH, "    h200: verified\n", "    h20: verified\n")
    finding = mini.only("unknown-hardware")
    assert finding.severity is Severity.WARNING and "never shown" in finding.message


def test_unknown_arch_selector(mini):
    text = mini.replace(RECIPE_PATH, '"arch:sm100"', '"arch:sm999"')
    finding = mini.only("unknown-hardware")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "arch:sm999"), "variants.fp8.supported_hardware[1]")
    assert "compute architecture 'sm999'" in finding.message


def test_unknown_strategy(mini):
    text = mini.replace(
        RECIPE_PATH,
        "compatible_strategies: [single_node_tp, multi_node_tp]",
        "compatible_strategies: [single_node_tp, multi_node_pp]",
    )
    finding = mini.only("unknown-strategy")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "compatible_strategies"), "compatible_strategies[1]")
    assert "multi_node_pp" in finding.message


def test_opt_in_feature_that_does_not_exist(mini):
    text = mini.replace(
        RECIPE_PATH,
        "opt_in_features: [spec_decoding, text_only]",
        "opt_in_features: [spec_decoding, text_onyl]",
    )
    finding = mini.only("feature-reference")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "opt_in_features"), "opt_in_features[1]")
    assert "did you mean 'text_only'" in finding.message


def test_modes_feature_with_flat_args(mini):
    text = mini.replace(
        RECIPE_PATH,
        "    default_mode: mtp\n",
        '    default_mode: mtp\n    args: ["--speculative-config", "{}"]\n',
    )
    finding = mini.only("args-and-modes")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, 'args: ["--speculative-config", "{}"]'),
        "features.spec_decoding.args",
    )


def test_variant_without_a_usable_mode(mini):
    text = mini.replace(
        RECIPE_PATH, '        label: "MTP"\n', '        label: "MTP"\n        variants: [default]\n'
    )
    found = [f for f in mini.findings() if f.code == "no-usable-mode"]
    assert len(found) == 1
    assert_at(found[0], mini, RECIPE_PATH, line_of(text, "    modes:"), "features.spec_decoding.modes")
    assert "variant 'fp8'" in found[0].message
    # the fp8 variant's default mode is now unavailable for it, too
    assert any(f.code == "mode-reference" and "not available" in f.message for f in mini.findings())


def test_default_mode_naming_an_unknown_mode(mini):
    text = mini.replace(RECIPE_PATH, "    default_mode: mtp\n", "    default_mode: medusa\n")
    finding = mini.only("mode-reference")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, "default_mode: medusa"),
        "features.spec_decoding.default_mode",
    )


def test_default_modes_naming_a_feature_without_modes(mini):
    text = mini.replace(RECIPE_PATH, "      spec_decoding: mtp\n", "      reasoning: mtp\n")
    finding = mini.only("mode-reference")
    assert_at(
        finding, mini, RECIPE_PATH, line_of(text, "reasoning: mtp"), "variants.fp8.default_modes.reasoning"
    )
    assert "has no modes" in finding.message


def test_default_modes_naming_an_unknown_feature_and_an_unavailable_mode(mini):
    text = mini.replace(
        RECIPE_PATH, "      spec_decoding: mtp\n", "      spec_decoding: eagle\n      speculation: mtp\n"
    )
    by_code = {f.code: f for f in mini.findings()}
    assert_at(
        by_code["feature-reference"],
        mini,
        RECIPE_PATH,
        line_of(text, "speculation: mtp"),
        "variants.fp8.default_modes.speculation",
    )
    unavailable = by_code["mode-reference"]
    assert_at(
        unavailable,
        mini,
        RECIPE_PATH,
        line_of(text, "spec_decoding: eagle"),
        "variants.fp8.default_modes.spec_decoding",
    )
    assert "not available for variant 'fp8'" in unavailable.message


def test_mode_naming_an_unknown_variant(mini):
    text = mini.replace(RECIPE_PATH, "        variants: [default]\n", "        variants: [default, int4]\n")
    finding = mini.only("variant-reference")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, "variants: [default, int4]"),
        "features.spec_decoding.modes.eagle.variants[1]",
    )


def test_missing_default_variant(mini):
    text = mini.replace(RECIPE_PATH, "  default:\n    precision: bf16\n", "  bf16:\n    precision: bf16\n")
    finding = mini.only("missing-default-variant")
    assert_at(finding, mini, RECIPE_PATH, text.splitlines().index("variants:") + 1, "variants")


def test_unparsable_version(mini):
    text = mini.replace(RECIPE_PATH, 'min_vllm_version: "0.17.0"', 'min_vllm_version: "0.17.x"')
    finding = mini.only("bad-version")
    assert finding.is_error
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "0.17.x"), "model.min_vllm_version")


def test_nightly_version_is_a_warning(mini):
    mini.replace(RECIPE_PATH, 'min_vllm_version: "0.17.0"', 'min_vllm_version: "nightly"')
    finding = mini.only("bad-version")
    assert finding.severity is Severity.WARNING and "nightly_required" in finding.fix


def test_exclusive_with_unknown_feature(mini):
    text = mini.replace(
        RECIPE_PATH, "exclusive_with: [encoder_parallel]", "exclusive_with: [encoder_paralel]"
    )
    finding = next(f for f in mini.findings() if f.code == "feature-reference")
    assert_at(
        finding, mini, RECIPE_PATH, line_of(text, "encoder_paralel"), "features.text_only.exclusive_with[0]"
    )


def test_exclusive_features_both_on_by_default(mini):
    text = mini.replace(
        RECIPE_PATH, "opt_in_features: [spec_decoding, text_only]", "opt_in_features: [spec_decoding]"
    )
    finding = mini.only("exclusive-defaults")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, "exclusive_with: [encoder_parallel]"),
        "features.text_only.exclusive_with[0]",
    )


def test_duplicate_key_points_at_the_repeat(mini):
    text = mini.replace(
        RECIPE_PATH, '  parameter_count: "8B"\n', '  parameter_count: "8B"\n  parameter_count: "9B"\n'
    )
    finding = mini.only("duplicate-key")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, '"9B"'), "model.parameter_count")


def test_value_outside_a_fixed_set(mini):
    text = mini.replace(RECIPE_PATH, "  architecture: dense\n", "  architecture: hybrid\n")
    finding = mini.only("bad-value")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "hybrid"), "model.architecture")
    assert "'dense'" in finding.message


def test_union_type_error_names_every_accepted_form(mini):
    text = mini.replace(RECIPE_PATH, '  docker_image: "vllm/vllm-openai:latest"\n', "  docker_image: 5\n")
    finding = mini.only("wrong-type")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "docker_image: 5"), "model.docker_image")
    assert "a string" in finding.message and "a mapping" in finding.message


def test_unknown_kv_offload_option_task_and_platform(mini):
    text = mini.read(RECIPE_PATH)
    text = text.replace("  simple: verified", "  lmcache: verified").replace("tasks: [text]", "tasks: [txt]")
    text = text.replace("platforms: [modal]", "platforms: [modall]")
    mini.write(RECIPE_PATH, text)
    messages = {f.location.key(): f for f in mini.findings() if f.code == "unknown-reference"}
    assert messages["kv_offload_support.lmcache"].location.line == line_of(text, "lmcache: verified")
    assert messages["meta.tasks[0]"].location.line == line_of(text, "tasks: [txt]")
    assert messages["meta.platforms[0]"].location.line == line_of(text, "platforms: [modall]")


def test_strategy_file_errors_name_the_strategy_file(mini):
    text = mini.replace("strategies/single_node_tp.yaml", "deploy_type: single_node", "deploy_type: one_node")
    finding = mini.only("bad-value")
    assert_at(finding, mini, "strategies/single_node_tp.yaml", line_of(text, "one_node"), "deploy_type")


def test_taxonomy_lists_a_strategy_without_a_file(mini):
    text = mini.replace("taxonomy.yaml", "  - multi_node_tp\n", "  - multi_node_tp\n  - multi_node_dep\n")
    finding = mini.only("unknown-strategy")
    assert_at(finding, mini, "taxonomy.yaml", line_of(text, "multi_node_dep"), "strategies[2]")


def test_kv_store_with_bad_brand_key_and_version(mini):
    text = (
        mini.read("kv_store/kv_store_demo.yaml")
        .replace("    nvidia:", "    cuda:")
        .replace('"0.21.0"', '"v0.21.0-beta!"')
    )
    mini.write("kv_store/kv_store_demo.yaml", text)
    by_code = {f.code: f for f in mini.findings()}
    assert_at(
        by_code["unknown-hardware"],
        mini,
        "kv_store/kv_store_demo.yaml",
        line_of(text, "cuda:"),
        "vllm.install.cuda",
    )
    assert_at(
        by_code["bad-version"],
        mini,
        "kv_store/kv_store_demo.yaml",
        line_of(text, "v0.21.0"),
        "min_vllm_version",
    )


def test_document_that_is_not_a_mapping(mini):
    mini.write(RECIPE_PATH, "- just\n- a list\n")
    finding = mini.only("wrong-type")
    assert finding.location.file == str(mini.root / RECIPE_PATH) and finding.location.line == 1


def test_recipe_outside_an_organisation_folder(mini):
    mini.write("models/Stray.yaml", mini.read(RECIPE_PATH))
    finding = mini.only("recipe-path")
    assert finding.location.file == str(mini.root / "models/Stray.yaml")


def test_every_problem_is_reported_not_only_the_first(mini):
    recipe = mini.read(RECIPE_PATH)
    recipe = recipe.replace("    vram_minimum_gb: 20", '    vram_minimum_gb: "lots"')
    recipe = recipe.replace("      hopper:", "      hoper:").replace("default_mode: mtp", "default_mode: x")
    mini.write(RECIPE_PATH, recipe)
    mini.replace("strategies/multi_node_tp.yaml", "min_gpus: 2", "min_gpus: 0")
    findings = mini.findings()
    codes = {(f.location.file.rsplit("/", 1)[-1], f.code) for f in findings}
    assert {
        ("Model.yaml", "wrong-type"),
        ("Model.yaml", "unknown-hardware"),
        ("Model.yaml", "mode-reference"),
        ("multi_node_tp.yaml", "bad-value"),
    } <= codes
    # sorted by file, then line
    keys = [(f.location.file, f.location.line or 0) for f in findings]
    assert keys == sorted(keys)


def test_strategy_with_inverted_gpu_bounds(mini):
    text = mini.replace("strategies/single_node_tp.yaml", "  max_gpus: 8\n", "  max_gpus: 0\n")
    codes = {f.code: f for f in mini.findings()}
    # 0 is below the schema's minimum of 1, and below min_gpus
    assert codes["bad-value"].location.line == line_of(text, "max_gpus: 0")


def test_pd_cluster_strategy_without_roles(mini):
    mini.write("strategies/pd_cluster.yaml", "name: pd_cluster\ndeploy_type: pd_cluster\ndisplay_name: PD\n")
    mini.replace("taxonomy.yaml", "  - multi_node_tp\n", "  - multi_node_tp\n  - pd_cluster\n")
    keys = sorted(f.location.key() for f in mini.findings() if f.code == "missing-key")
    assert keys == ["decode", "prefill"]


def test_string_where_a_list_is_expected(mini):
    text = mini.replace(RECIPE_PATH, "  base_args: []\n", '  base_args: "--trust-remote-code"\n')
    finding = mini.only("wrong-type")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "base_args"), "model.base_args")
    assert "expected a list" in finding.message and "list" in finding.fix


def test_install_tab_accepts_only_false_or_a_mapping(mini):
    text = mini.replace(RECIPE_PATH, "  base_args: []\n", "  base_args: []\n  install:\n    pip: true\n")
    finding = mini.only("wrong-type")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "pip: true"), "model.install.pip")
    assert "false" in finding.message and "a mapping" in finding.message


def test_misspelled_unsupported_mark_is_caught(mini):
    text = mini.replace(
        RECIPE_PATH,
        '        label: "EAGLE"\n',
        '        label: "EAGLE"\n        hardware:\n          mi300x: unsuported\n',
    )
    finding = mini.only("bad-value")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, "unsuported"),
        "features.spec_decoding.modes.eagle.hardware.mi300x",
    )


def test_variant_default_mode_turning_on_an_excluded_feature(mini):
    recipe = mini.read(RECIPE_PATH)
    recipe = recipe.replace(
        '    args: ["--language-model-only"]\n    exclusive_with: [encoder_parallel]\n',
        '    args: ["--language-model-only"]\n    exclusive_with: [encoder_parallel, spec_decoding]\n',
    )
    mini.write(RECIPE_PATH, recipe)
    assert mini.findings() == []  # text_only is opt-in, so nothing collides yet
    text = mini.replace(
        RECIPE_PATH,
        "opt_in_features: [spec_decoding, text_only]",
        "opt_in_features: [spec_decoding, text_only, encoder_parallel]",
    )
    assert mini.findings() == []
    text = mini.replace(
        RECIPE_PATH,
        "opt_in_features: [spec_decoding, text_only, encoder_parallel]",
        "opt_in_features: [spec_decoding, encoder_parallel]",
    )
    # text_only (now on by default) excludes spec_decoding, which fp8 turns on by default
    finding = mini.only("exclusive-defaults")
    assert_at(
        finding,
        mini,
        RECIPE_PATH,
        line_of(text, "      spec_decoding: mtp"),
        "variants.fp8.default_modes.spec_decoding",
    )


def test_brand_keys_are_lower_case(mini):
    text = mini.replace(RECIPE_PATH, "  amd:\n    extra_env:", "  AMD:\n    extra_env:")
    finding = mini.only("unknown-hardware")
    assert_at(finding, mini, RECIPE_PATH, line_of(text, "  AMD:"), "hardware_overrides.AMD")
    assert "did you mean 'amd'" in finding.message
