"""pysb-bpf demo: one allowed and two denied accesses, from Python and from native code."""
import ctypes
import os

here = os.path.dirname(os.path.abspath(__file__))

with open(os.path.join(here, "data", "greeting.txt")) as f:
    print("allowed: read data/greeting.txt ->", f.read().strip())

try:
    with open("/etc/hostname") as f:
        print("NOT DENIED: read /etc/hostname ->", f.read().strip())
except PermissionError as e:
    print("denied:  read /etc/hostname ->", e)

# The same through libc, as a C extension would do it: the kernel sees the same open().
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.open(b"/etc/passwd", os.O_RDONLY)
if fd < 0:
    print("denied:  libc open(/etc/passwd) ->", os.strerror(ctypes.get_errno()))
else:
    print("NOT DENIED: libc open(/etc/passwd)")
