"""The signer's leaves files (operations/signer_files.py writes them): per checkpoint N,
`leaves-0000000N.bin` holds the RFC 9162 leaf hashes, 32 bytes each, of the log positions N
signed that the checkpoint before it did not. `verify_ledger` reads them to name the one
position whose entry changed."""

from pathlib import Path

LEAF_BYTES = 32


def leaves_file_name(number: int) -> str:
    return f"leaves-{number:08d}.bin"


def read_leaves(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[at:at + LEAF_BYTES] for at in range(0, len(data), LEAF_BYTES)]


def leaves_in(folders) -> dict[int, list[bytes]]:
    """Every leaves file in `folders`, by checkpoint number."""
    return {int(path.stem.split("-")[1]): read_leaves(path) for folder in folders
            for path in Path(folder).glob("leaves-*.bin") if path.stem.split("-")[1].isdigit()}
