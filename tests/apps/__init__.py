"""Example apps built with atipkit.app, run by the tests in-process and as real processes."""
