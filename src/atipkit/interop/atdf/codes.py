"""The failure codes atipkit speaks in ATDF: the same words in a descriptor's
`outputs.failure` (what may go wrong when the command is called through atipkit) and in an
enriched error response's `data.code` (what did go wrong), UPPER_SNAKE as the enriched
response schema requires (`^[A-Z_]+$`).
"""

from __future__ import annotations

INVALID_CALL = "INVALID_CALL"
"""The call names no function of the compiled tools, or its arguments do not map."""
UNKNOWN_TOOL = "UNKNOWN_TOOL"
"""The call maps to a tool the executor was not given."""
DENIED_BY_POLICY = "DENIED_BY_POLICY"
"""The policy forbids the call."""
CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
"""The policy wants a person to confirm the call, and nobody did."""
INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
"""A value does not fit its parameter (type, allowed values, pattern, required)."""
INPUT_REFUSED = "INPUT_REFUSED"
"""The command's stdin requirement cannot be met (required input missing, a password)."""
NOT_STARTED = "NOT_STARTED"
"""The executable could not be started."""
TIMED_OUT = "TIMED_OUT"
"""The command did not finish in time; its process group was killed."""
OUTPUT_TOO_LARGE = "OUTPUT_TOO_LARGE"
"""The command wrote more than the output cap and was stopped."""
NON_ZERO_EXIT = "NON_ZERO_EXIT"
"""The command ran and exited with a non-zero status."""
