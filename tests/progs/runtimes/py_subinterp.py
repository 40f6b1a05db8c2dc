# A sub-interpreter's allocation (tests/runtimes/python_subinterp.sh): a
# 777,777-byte bytearray made by inner < outer < <module> of a script run
# by interp_run_string, called from run_sub < <module> here. It prints the
# lines of those frames as Python gives them (the test's second source).
import sys
try:
    import _xxsubinterpreters as interpreters        # 3.11, 3.12
except ImportError:
    import _interpreters as interpreters             # 3.13

SCRIPT = """
import sys
def inner():
    print("inner", sys._getframe().f_lineno + 1)
    return bytearray(777777)

def outer():
    print("outer", sys._getframe().f_lineno + 1)
    return inner()

print("script", sys._getframe().f_lineno + 1)
kept = outer()
"""


def run_sub(interp):
    print("run_sub", sys._getframe().f_lineno + 1, flush=True)
    interpreters.run_string(interp, SCRIPT)


interp = interpreters.create()
print("module", sys._getframe().f_lineno + 1, flush=True)
run_sub(interp)
interpreters.destroy(interp)
