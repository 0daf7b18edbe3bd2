"""A client openapi-generator's typescript-fetch makes from the published schema, with the
generator's default settings (`openapi-generator-cli generate -g typescript-fetch`, no options),
compiles the incident story (tools/contract/fetch-story/story.ts) under `tsc --strict` with no
cast, and takes the request bodies the server takes (accepted.ts).

The generator is the PyPI package openapi-generator-cli (the `test` extra; its wheel carries the
jar, so nothing is downloaded at run time) and needs Java; tsc comes from tools/contract. One
generation per run (about 6 s). Like the other node tools: skipped without them, failed where
`.ci/run` sets CONTRACT_TOOLS_REQUIRED=1.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from tests.contract.test_contract_tools import TOOLS, node  # noqa: F401 (fixture)

STORY = TOOLS / "fetch-story"
GENERATOR = Path(sys.executable).with_name("openapi-generator-cli")
# The story's casts: `as X` (but `as const`), `<X>value`, `any`, a `@ts-` directive.
CAST = re.compile(r"\bas\s+(?!const\b)[A-Za-z{[]|<[A-Za-z]+>\s*\w|\bany\b|@ts-")


def required(missing: str) -> None:
    if os.environ.get("CONTRACT_TOOLS_REQUIRED") == "1":
        pytest.fail(f"{missing} (.ci/run installs it)")
    pytest.skip(missing)


@pytest.fixture(scope="module")
def client_folder(node, tmp_path_factory, django_db_blocker):  # noqa: F811
    """The generated client (its index.ts re-exports the APIs and models)."""
    if not GENERATOR.exists():
        required("openapi-generator-cli is not installed: pip install -e '.[test]'")
    if shutil.which("java") is None:
        required("java is not installed (openapi-generator-cli runs a jar)")
    folder = tmp_path_factory.mktemp("typescript-fetch")
    with django_db_blocker.unblock():
        schema = SchemaGenerator().get_schema(request=None, public=True)
    (folder / "openapi.json").write_bytes(OpenApiJsonRenderer().render(schema, {}))
    built = subprocess.run(
        [str(GENERATOR), "generate", "-i", "openapi.json", "-g", "typescript-fetch",
         "-o", "client"], cwd=folder, capture_output=True, text=True, timeout=300)
    # Its default settings validate the schema first: an error there fails here.
    assert built.returncode == 0, built.stdout[-5000:] + built.stderr[-5000:]
    return folder / "client"


def compile_story(node_path, client, work: Path):
    """`tsc --strict --noEmit` over the story and accepted.ts, beside `client`."""
    shutil.copy(STORY / "story.ts", work / "story.ts")
    shutil.copy(STORY / "accepted.ts", work / "accepted.ts")
    if not (work / "client").exists():
        (work / "client").symlink_to(client, target_is_directory=True)
    (work / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true, "noEmit": true, "target": "ES2022",'
        ' "module": "ESNext", "moduleResolution": "Bundler", "types": [],'
        ' "lib": ["ES2022", "DOM", "DOM.Iterable"]}, "files": ["story.ts", "accepted.ts"]}')
    return subprocess.run([node_path, str(TOOLS / "node_modules/typescript/bin/tsc"), "-p",
                           str(work)], capture_output=True, text=True, timeout=120)


def casts_in(story: Path) -> list[str]:
    return [line for line in story.read_text().splitlines()
            if CAST.search(line) and not line.lstrip().startswith("//")]


def test_the_generated_client_compiles_the_incident_story(node, client_folder, tmp_path):  # noqa: F811
    checked = compile_story(node, client_folder, tmp_path)

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert casts_in(STORY / "story.ts") == []


def test_a_request_field_the_server_does_not_need_fails_the_type_check(
        node, client_folder, tmp_path):  # noqa: F811
    """As the schema was before its constraint branches hid their `required` from the
    generator (it copied them into the model): both lease shapes required, so a lock with one
    of them, as the story sends, did not compile."""
    client = tmp_path / "client"
    shutil.copytree(client_folder, client)
    model = client / "models" / "LockInputRequest.ts"
    model.write_text(model.read_text().replace("leaseUntil?: Date;", "leaseUntil: Date;"))

    checked = compile_story(node, client, tmp_path)

    assert checked.returncode != 0
    assert "leaseUntil" in checked.stdout and "story.ts" in checked.stdout


def test_a_cast_in_the_story_is_found(tmp_path):
    story = tmp_path / "cast.ts"
    story.write_text((STORY / "story.ts").read_text().replace(
        "const leaseA = await lock(\"order-A\");",
        "const leaseA = (await lock(\"order-A\")) as LockOutput;"))

    assert casts_in(story) == ['  const leaseA = (await lock("order-A")) as LockOutput;']
