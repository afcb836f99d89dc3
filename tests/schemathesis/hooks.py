"""Schemathesis hooks: how to generate the document's own string formats.

`evm-address` is `0x` and 40 hex digits whose mixed case must be a valid EIP-55 checksum
(the server refuses a wrong one, as the format's description says). Valid examples are
all-lowercase or all-uppercase hex, never one of Openrail's contracts or the zero address
(both refused too, and described so). Negative cases still come from the pattern.
"""

import schemathesis
from hypothesis import strategies as st

_HEX = "0123456789abcdef"


def _address(digits: str, upper: bool) -> str:
    body = digits.upper() if upper else digits
    return "0x" + body


schemathesis.openapi.format(
    "evm-address",
    st.builds(
        _address,
        st.text(alphabet=_HEX, min_size=40, max_size=40).filter(lambda d: d.strip("0") != ""),
        st.booleans(),
    ),
)
