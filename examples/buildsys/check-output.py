"""Runs the program and compares its output with expected.txt (Meson's test for the project)."""
import subprocess
import sys

out = subprocess.run([sys.argv[1]], capture_output=True, text=True, check=False)
expected = open(sys.argv[2], encoding="utf-8").read()
if out.returncode != 0 or out.stdout != expected:
    sys.exit(f"exit {out.returncode}; got:\n{out.stdout}{out.stderr}\nexpected:\n{expected}")
