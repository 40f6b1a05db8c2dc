# 4 Python threads, each in its own function (tests/runtimes/python_frames.sh):
# each allocates 10 bytearrays of 50,000 bytes.
import threading


def worker_alpha():
    return [bytearray(50000) for _ in range(10)]


def worker_beta():
    return [bytearray(50000) for _ in range(10)]


def worker_gamma():
    return [bytearray(50000) for _ in range(10)]


def worker_delta():
    return [bytearray(50000) for _ in range(10)]


if __name__ == "__main__":
    threads = [threading.Thread(target=f, name=f.__name__[7:])
               for f in (worker_alpha, worker_beta, worker_gamma, worker_delta)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("4 threads done")
