"""Agent Tool Description Format (ATDF): ATIP tools out as ATDF descriptors, ATDF
descriptors in as an ATIP tool, and an executor's outcomes as ATDF enriched responses.

    from atipkit.interop.atdf import export_atdf, import_atdf, enriched_response

    descriptors = export_atdf(tool, enhanced=True)    # one per invocable command
    again = import_atdf(descriptors)                  # the same ATIP tool (x-atip)
    response = enriched_response(executor.execute(call))

One concept a module: `schemas` (the shipped schema files, flavours, checking with JSON
paths), `datatypes` (ATIP ↔ ATDF types), `wording` (the prose derived from metadata),
`codes` (the failure codes), `extension` (`x-atip`), `export`, `reader` (import) and
`responses`. Every descriptor and response atipkit writes is checked against its schema
with jsonschema-rs before it is returned.
"""

from atipkit.interop.atdf.export import export_atdf
from atipkit.interop.atdf.reader import ToolNameError, import_atdf, loads_atdf, read_atdf
from atipkit.interop.atdf.responses import enriched_response
from atipkit.interop.atdf.schemas import AtdfError, Flavour, check_descriptor, flavour

__all__ = [
    "AtdfError",
    "Flavour",
    "ToolNameError",
    "check_descriptor",
    "enriched_response",
    "export_atdf",
    "flavour",
    "import_atdf",
    "loads_atdf",
    "read_atdf",
]
