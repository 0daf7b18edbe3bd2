"""The hand mutations (scripts/hand_mutations.toml) still apply to the code as it is: each
snippet is found exactly once in its file and each covering test exists. A move or an edit
that loses one fails here, not weeks later in `bin/mutation --hand`."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("hand_mutations",
                                               ROOT / "scripts" / "hand_mutations.py")
hand_mutations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hand_mutations)
MUTATIONS = hand_mutations.load()


def test_the_table_is_not_empty_and_its_names_are_unique():
    names = [m.name for m in MUTATIONS]
    assert names and len(names) == len(set(names))


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_mutation_applies_once_to_its_file(mutation):
    assert mutation.problem(ROOT) is None


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_covering_test_exists(mutation):
    for node in mutation.tests:
        path, _, name = node.partition("::")
        name = name.partition("[")[0]
        assert (ROOT / path).is_file(), node
        assert re.search(rf"^def {re.escape(name)}\(", (ROOT / path).read_text(), re.M), node


def test_a_snippet_that_is_gone_or_ambiguous_is_named(tmp_path):
    (tmp_path / "module.py").write_text("x = 1\nx = 1\n")
    twice = hand_mutations.Mutation(name="n", file="module.py", breakage="", original="x = 1",
                                    replacement="x = 2", tests=("t",), module="module.py")
    gone = hand_mutations.Mutation(name="n", file="module.py", breakage="", original="y = 1",
                                   replacement="y = 2", tests=("t",), module="module.py")

    assert twice.problem(tmp_path) == "its original snippet occurs 2 times in module.py " \
        "(must be once)"
    assert gone.problem(tmp_path) == "its original snippet occurs 0 times in module.py " \
        "(must be once)"
