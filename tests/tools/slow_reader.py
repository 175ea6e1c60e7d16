# A client that reads its server's stdout slowly, for stdio_slow_reader_test.ts:
# sends the request lines it reads on stdin, leaves the server's stdout pipe
# unread until it is full (a non-blocking one makes the server meet
# WouldBlock), then closes the server's stdin (the calls under way must still
# be answered) and relays every line the server writes to its own stdout.
#
# Mode `closed`: reads the first answer, closes the pipe, sends the rest and
# waits (60 s at most) for the server to exit on its own; stdin stays open.
#
#   python3 slow_reader.py blocking|nonblocking|closed <command> [args...]

import fcntl
import os
import subprocess
import sys
import termios
import time

F_GETPIPE_SZ = 1032  # Linux fcntl; Python's fcntl module names it from 3.10 only


def main() -> int:
    mode, command = sys.argv[1], sys.argv[2:]
    requests = sys.stdin.buffer.read()
    read_end, write_end = os.pipe()
    if mode == "nonblocking":
        flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
        fcntl.fcntl(write_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=write_end)
    os.close(write_end)
    if mode == "closed":
        return reader_gone(server, read_end, requests)
    server.stdin.write(requests)
    server.stdin.flush()
    # Pages of a pipe are not always filled to the brim: a page short is full
    # for a server with much more to write (its next write meets WouldBlock).
    capacity = fcntl.fcntl(read_end, F_GETPIPE_SZ)
    full = capacity - os.sysconf("SC_PAGE_SIZE")
    deadline = time.monotonic() + 120
    while unread(read_end) < full:
        if server.poll() is not None or time.monotonic() > deadline:
            print(f"stdout pipe never filled: {unread(read_end)} of {capacity} bytes",
                  file=sys.stderr)
            server.kill()
            return 2
        time.sleep(0.01)
    print(f"stdout pipe full: {unread(read_end)} of {capacity} bytes", file=sys.stderr, flush=True)
    server.stdin.close()
    with os.fdopen(read_end, "rb") as stdout:
        for chunk in iter(lambda: stdout.read(65536), b""):
            sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    return server.wait()


def reader_gone(server: subprocess.Popen, read_end: int, requests: bytes) -> int:
    """The client stops reading for good: the server must notice and exit."""
    first, rest = requests.split(b"\n", 1)
    server.stdin.write(first + b"\n")
    server.stdin.flush()
    with os.fdopen(read_end, "rb") as stdout:
        sys.stdout.buffer.write(stdout.readline())
    sys.stdout.flush()
    server.stdin.write(rest)
    server.stdin.flush()
    try:
        return server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        print("the server did not exit after its stdout closed", file=sys.stderr)
        server.kill()
        return 3


def unread(fd: int) -> int:
    """Bytes waiting in the pipe (FIONREAD)."""
    size = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, size)
    return int.from_bytes(size, sys.byteorder)


sys.exit(main())
