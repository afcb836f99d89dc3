"""The README's Python snippet (and the guide's) is the body of ``examples/quickstart.py``,
between its ``readme-start`` and ``readme-end`` markers, as it is."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "clients" / "python" / "examples" / "quickstart.py"
MARKER = "<!-- readme-test: clients/python/examples/quickstart.py -->\n```python\n"


def example_block(source: str) -> str:
    start = source.index("    # readme-start\n") + len("    # readme-start\n")
    end = source.index("    # readme-end")
    lines = source[start:end].splitlines()
    assert all(not l or l.startswith("    ") for l in lines), "the block is the function's body"
    return "\n".join(l[4:] for l in lines).rstrip() + "\n"


def shown(document: Path) -> str:
    text = document.read_text()
    assert MARKER in text, f"{document.name} has no Python quickstart marker"
    at = text.index(MARKER) + len(MARKER)
    return text[at : text.index("```", at)]


def test_the_readme_shows_the_quickstart_example_as_it_is() -> None:
    block = example_block(EXAMPLE.read_text())
    assert "client = Openrail(key, base_url=api)" in block
    assert shown(ROOT / "README.md") == block, (
        "README.md's Python snippet differs from clients/python/examples/quickstart.py (copy it over)"
    )


def test_the_guide_shows_the_quickstart_example_as_it_is() -> None:
    block = example_block(EXAMPLE.read_text())
    assert shown(ROOT / "docs" / "python-sdk.md") == block, (
        "docs/python-sdk.md's quickstart differs from clients/python/examples/quickstart.py"
    )
