"""Loading documents from many threads at once, starting in a fresh process (first use of
the model's types is the dangerous moment: it once crashed the interpreter)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import EXAMPLES

_CONCURRENT = """
import sys, threading
from atipkit.validation import validate
data = open(sys.argv[1], 'rb').read()
errors = []
def work():
    try:
        for _ in range(3):
            assert validate(data).ok
    except Exception as exc:
        errors.append(exc)
threads = [threading.Thread(target=work) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(len(errors))
"""


def test_first_use_from_many_threads_is_safe():
    doc = str(EXAMPLES / "tools" / "kubectl.json")
    for _ in range(8):
        proc = subprocess.run(
            [sys.executable, "-c", _CONCURRENT, doc], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip() == "0"
