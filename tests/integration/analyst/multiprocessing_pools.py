# SPDX-License-Identifier: ISC
# The standard library's process and thread pools, a Manager and shared memory.
import concurrent.futures as cf
import multiprocessing as mp
from multiprocessing import shared_memory


def work(n):
    return sum(i * i for i in range(n))


if __name__ == "__main__":
    with mp.Pool() as pool:
        a = pool.map(work, [10000] * 8)
    with cf.ProcessPoolExecutor() as ex:
        b = list(ex.map(work, [10000] * 8))
    with cf.ThreadPoolExecutor(8) as ex:
        c = list(ex.map(work, [1000] * 8))
    with mp.Manager() as m:
        d = m.dict()
        ps = [mp.Process(target=d.__setitem__, args=(i, i * i)) for i in range(3)]
        [p.start() for p in ps]
        [p.join() for p in ps]
        d = sorted(d.items())
    shm = shared_memory.SharedMemory(create=True, size=1024)
    shm.buf[:5] = b"hello"
    other = shared_memory.SharedMemory(name=shm.name)
    e = bytes(other.buf[:5])
    other.close(); shm.close(); shm.unlink()
    print("RESULT", a == b, len(c), d, e)
