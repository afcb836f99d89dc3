"""The ``dev`` fixture (helpers.py): the ``openrail dev`` that tests/mcp/run.sh started."""

from helpers import dev

__all__ = ["dev"]
