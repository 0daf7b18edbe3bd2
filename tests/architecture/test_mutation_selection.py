"""bin/mutation's selection (pyproject.toml, [tool.mutmut]): a path that no longer exists runs
no test against a mutant, or mutates nothing, without a word."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_mutation_selection_names_paths_that_exist():
    mutmut = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    missing_tests = [path for path in mutmut["pytest_add_cli_args_test_selection"]
                     if not (ROOT / path).is_dir()]
    nothing_mutated = [pattern for pattern in mutmut["only_mutate"]
                       if not list(ROOT.glob(pattern))]
    assert (missing_tests, nothing_mutated) == ([], [])
