# issue 29's job (tests/runtimes/python_frames.sh; its line numbers are asserted):
# 100 bytearrays of 100,000 bytes at line 6, 20,000 two-element lists at line 14.
def big_buffers(n):
    out = []
    for i in range(n):
        b = bytearray(100000)
        out.append(b)
    return len(out)


def small_objects(n):
    x = []
    for i in range(n):
        x.append([i, i])
    return x


def run_job():
    print("big_buffers:", big_buffers(100))
    print("small_objects:", len(small_objects(20000)))


if __name__ == "__main__":
    run_job()
