"""Run the hand mutations of scripts/hand_mutations.toml: each alone, against its own tests.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bin/mutation --hand [NAME ...]

The repository is copied once to a scratch directory; the working tree is never touched, so a
run that is interrupted leaves nothing mutated behind. The covering tests of every selected
mutation run first on the unmutated copy and must pass (a test that fails anyway would count
as a kill). Then each mutation is written into the copy, its tests run (`pytest -x`), and the
file is put back. A mutation is killed when its tests fail, survives when they pass; any other
pytest outcome (a node id that no longer exists, a collection error) is an error, reported as
such and counted as not killed.

PostgreSQL only: several breakages (a grant, a fingerprint in SQL) show nowhere else. The
tests use the database TEST_DATABASE_NAME (default test_hand_mutations), created by the first
run and reused by the others (no mutation touches a model).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "scripts" / "hand_mutations.toml"
# Not copied: other checkouts' and tools' state, none of which the tests read.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "node_modules", "mutants", "__pycache__", ".pytest_cache", ".ruff_cache",
    ".hypothesis", "test-artifacts", "staticfiles", ".pgdata")
PYTEST_PASSED, PYTEST_FAILED = 0, 1


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    breakage: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    module: str

    def problem(self, root: Path) -> str | None:
        """Why the mutation cannot be applied to the tree at `root`, or None."""
        path = root / self.file
        if not path.is_file():
            return f"{self.file} does not exist"
        found = path.read_text().count(self.original)
        if found != 1:
            return f"its original snippet occurs {found} times in {self.file} (must be once)"
        if self.original == self.replacement:
            return "its replacement is its original"
        if not self.tests:
            return "it names no test"
        return None


def load(path: Path = TABLE) -> list[Mutation]:
    with path.open("rb") as table:
        rows = tomllib.load(table)["mutation"]
    mutations = [Mutation(name=row["name"], file=row["file"], breakage=row["breakage"],
                          original=row["original"], replacement=row["replacement"],
                          tests=tuple(row["tests"]), module=row.get("module", row["file"]))
                 for row in rows]
    names = [m.name for m in mutations]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SystemExit(f"{path.name}: names used twice: {', '.join(duplicates)}")
    return mutations


def scratch_copy() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="hand-mutations-"))
    shutil.copytree(ROOT, scratch / "repo", ignore=NOT_COPIED)
    return scratch / "repo"


def pytest(copy: Path, tests, *, first: bool) -> int:
    """pytest's exit status for `tests`, run in `copy`: `python -m pytest` puts the copy first
    on sys.path, ahead of the editable install of the real tree."""
    command = [sys.executable, "-m", "pytest", "-q", "-n0", "-x", "-p", "no:randomly",
               "-p", "no:cacheprovider", "--create-db" if first else "--reuse-db", *tests]
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True)
    if done.returncode not in (PYTEST_PASSED, PYTEST_FAILED) or (first and done.returncode):
        print("\n".join((done.stdout + done.stderr).splitlines()[-15:]), file=sys.stderr)
    return done.returncode


def imports_from(copy: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", "import coupons; print(coupons.__file__)"],
                          cwd=copy, capture_output=True, text=True, check=True)
    return Path(done.stdout.strip()).resolve()


def run(mutations: list[Mutation]) -> dict[str, str]:
    copy = scratch_copy()
    try:
        if copy.resolve() not in imports_from(copy).parents:
            raise SystemExit("the scratch copy imports the real tree's code: nothing would be "
                             "mutated")
        covering = list(dict.fromkeys(test for m in mutations for test in m.tests))
        print(f"{len(covering)} covering tests on the unmutated code...", flush=True)
        if pytest(copy, covering, first=True) != PYTEST_PASSED:
            raise SystemExit("the covering tests fail without any mutation: fix them first")
        outcomes = {}
        for mutation in mutations:
            path = copy / mutation.file
            text = path.read_text()
            started = time.monotonic()
            path.write_text(text.replace(mutation.original, mutation.replacement, 1))
            try:
                status = pytest(copy, mutation.tests, first=False)
            finally:
                path.write_text(text)
            outcomes[mutation.name] = {PYTEST_FAILED: "killed", PYTEST_PASSED: "survived"}.get(
                status, f"error (pytest exit {status})")
            print(f"{outcomes[mutation.name]:>9}  {mutation.name}  ({mutation.file}, "
                  f"{time.monotonic() - started:.0f} s)", flush=True)
        return outcomes
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)


def report(mutations: list[Mutation], outcomes: dict[str, str]) -> bool:
    per_module = defaultdict(lambda: [0, 0])
    for mutation in mutations:
        counts = per_module[mutation.module]
        counts[0] += outcomes[mutation.name] == "killed"
        counts[1] += 1
    print("\nkilled per module:")
    for module, (killed, total) in sorted(per_module.items()):
        print(f"  {killed}/{total}  {module}")
    killed = sum(k for k, _ in per_module.values())
    print(f"killed {killed} of {len(mutations)} ({100 * killed / len(mutations):.0f} %)")
    for mutation in mutations:
        if outcomes[mutation.name] != "killed":
            print(f"not killed: {mutation.name}: {mutation.breakage} [{outcomes[mutation.name]}]")
    return killed == len(mutations)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only these mutations (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    args = parser.parse_args()
    mutations = load()
    if args.names:
        unknown = set(args.names) - {m.name for m in mutations}
        if unknown:
            raise SystemExit(f"no such mutation: {', '.join(sorted(unknown))}")
        mutations = [m for m in mutations if m.name in args.names]
    if args.list:
        for mutation in mutations:
            print(f"{mutation.name}  ({mutation.file}): {mutation.breakage}")
        return 0
    problems = [f"{m.name}: {problem}" for m in mutations if (problem := m.problem(ROOT))]
    if problems:
        raise SystemExit("cannot apply:\n" + "\n".join(problems))
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL must name a PostgreSQL server, e.g. "
                         "DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres")
    os.environ.setdefault("TEST_DATABASE_NAME", "test_hand_mutations")
    return 0 if report(mutations, run(mutations)) else 1


if __name__ == "__main__":
    sys.exit(main())
