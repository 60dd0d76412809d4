"""What the tests share, one module per kind of helper; no test file imports another.

Test files (`test_*.py`) and `conftest.py` files import from here; nothing here imports
a test file. Fixtures stay in the `conftest.py` files, where pytest finds them.
"""
