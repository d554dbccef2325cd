"""The CLI: options generated from the parameter dataclasses; bad input is one line and exit status 2."""
import subprocess
import sys
from dataclasses import fields

import pytest

from anatomy_lib.cli import build_parser, layer_set, main, params_from
from anatomy_lib.importance import ImportanceParams
from anatomy_lib.manipulation import ManipulationParams
from anatomy_lib.predictability import PredictabilityParams
from anatomy_lib.structure import StructureParams


@pytest.mark.parametrize("command, params_class", [("predictability", PredictabilityParams),
                                                   ("structure", StructureParams),
                                                   ("manipulate", ManipulationParams)])
def test_defaults_come_from_the_dataclass(command, params_class):
    parser = build_parser()
    assert params_from(parser.parse_args([command]), params_class) == params_class()
    sub = parser._subparsers._group_actions[0].choices[command]
    options = {action.dest for action in sub._actions}
    for f in fields(params_class):
        assert f.name in options, f"--{f.name} missing"


def test_options_reach_the_params():
    args = build_parser().parse_args(["predictability", "--ridge-alpha", "0.5", "--substitutions", "15", "10-12",
                                      "3,5"])
    params = params_from(args, PredictabilityParams)
    assert params.ridge_alpha == 0.5 and params.substitutions == ((15,), (10, 11, 12), (3, 5))
    args = build_parser().parse_args(["importance", "--tensors", "matrices", "--seed", "3"])
    assert params_from(args, ImportanceParams, mode="skip") == ImportanceParams("skip", "matrices", 3)
    with pytest.raises(Exception):
        layer_set("ten")


def test_the_powered_recovery_sweep_starts_from_the_specimen_design_and_takes_its_layers():
    from anatomy_lib.recovery import PowerDesign, power_design

    parser = build_parser()
    args = parser.parse_args(["recovery-power", "--specimen", "gemma3-270m-q4"])
    assert params_from(args, PowerDesign, base=power_design("gemma3-270m-q4")) == power_design("gemma3-270m-q4")
    args = parser.parse_args(["recovery-power", "--layers", "2", "7", "--lrs", "3e-4", "--seeds", "4"])
    design = params_from(args, PowerDesign, base=power_design("smollm2-135m-instruct-q4"))
    assert (design.layers, design.lrs, design.seeds, design.steps) == ((2, 7), (3e-4,), 4, PowerDesign().steps)


def test_bad_input_is_one_line_with_exit_status_2(capsys):
    assert main(["structure", "--specimen", "no-such-thing"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown specimen") and "\n" not in err
    assert main(["predictability", "--ridge-alpha", "nan"]) == 2
    assert capsys.readouterr().err.strip() == "error: ridge_alpha must be a finite number, got nan"
    assert main(["manipulate", "--alphas", "0.5", "nan"]) == 2
    assert "alpha must be a finite number, got nan" in capsys.readouterr().err


def test_debug_shows_the_traceback():
    run = subprocess.run([sys.executable, "-m", "anatomy_lib", "structure", "--lags", "0", "--debug"],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "Traceback" in run.stderr and "lag must be a positive integer" in run.stderr
    run = subprocess.run([sys.executable, "-m", "anatomy_lib", "structure", "--lags", "0"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip() == "error: lag must be a positive integer, got 0"


def test_a_foreign_checkpoint_stops_growth_with_one_line(tmp_path):
    import subprocess
    import sys

    (tmp_path / "uniform-seed0.pt").write_bytes(b"not a checkpoint")
    done = subprocess.run([sys.executable, "-m", "anatomy_lib", "growth", "--profile", "smoke", "--arms", "uniform",
                           "--checkpoint-dir", str(tmp_path)], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1].startswith("error: checkpoint"), done.stderr
    assert "delete it" in done.stderr and "Traceback" not in done.stderr


def test_recovery_validates_its_layers_before_printing_its_plan(capsys):
    assert main(["recovery", "--profile", "smoke", "--layers", "99"]) == 2
    said = capsys.readouterr()
    assert "runs of" not in said.out and "layers: layer 99 is out of range; valid layers are 0..29" in said.err


def test_the_powered_sweep_validates_its_layers_before_printing_its_plan(capsys):
    assert main(["recovery-power", "--profile", "smoke", "--layers", "3", "99"]) == 2
    said = capsys.readouterr()
    assert "powered recovery sweep" not in said.out and "layer 99 is out of range; valid layers are 0..29" in said.err


def test_recovery_fixed_protocol_needs_a_matched_sweep(capsys):
    assert main(["recovery", "--profile", "smoke", "--damage", "sigma", "--fixed-protocol"]) == 2
    said = capsys.readouterr()
    assert "runs of" not in said.out and "--fixed-protocol runs beside a matched sweep" in said.err
