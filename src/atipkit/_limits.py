"""The limits on JSON input, in a module that imports nothing: a command's `--help` shows
them as defaults without loading the decoder (msgspec) that enforces them."""

#: Largest document accepted by default: room for ~20 000 commands, small enough that a
#: hostile file cannot exhaust memory. The probe caps a tool's stdout at the same size.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
#: Deepest nesting of arrays and objects accepted wherever JSON enters (`{}` is 1 level).
#: Real documents stay under 20 (a command five levels down with an option's schema); 64
#: leaves every recursive walker behind the gate (jsonschema-rs, the model's loader, the
#: exporters, the app's argument checks) far from the interpreter's and Rust's stack limits.
MAX_DEPTH = 64
