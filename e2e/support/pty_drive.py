#!/usr/bin/env python3
"""Run a command on a new pseudo-terminal and drive it like a user at a keyboard.

    pty_drive.py --transcript FILE [--stdout-pipe FILE] [--stderr FILE] STEP... -- COMMAND...

The command runs in its own session with the pseudo-terminal as its controlling terminal and
as stdin; stdout and stderr are the terminal too unless --stdout-pipe (a real pipe, drained
into FILE, as with `| tee`) or --stderr (a file, as with `2>FILE`) redirect them.
STEP is `expect:TEXT` (wait until TEXT appears on the terminal after the previous match) or
`send:TEXT` (type TEXT; Python escapes such as \\r and \\x03 are understood).
Everything the terminal showed is written to --transcript. The exit status is the command's,
128+N when signal N ended it, and 99 when an expected text never came (within 60 s).
"""

import os
import signal
import pty
import select
import sys
import time

TIMEOUT = 60.0


def main():
    args = sys.argv[1:]
    sep = args.index("--")
    opts, command = args[:sep], args[sep + 1 :]
    transcript_path = stdout_path = stderr_path = None
    steps = []
    i = 0
    while i < len(opts):
        o = opts[i]
        if o in ("--transcript", "--stdout-pipe", "--stderr"):
            v = opts[i + 1]
            i += 2
            if o == "--transcript":
                transcript_path = v
            elif o == "--stdout-pipe":
                stdout_path = v
            else:
                stderr_path = v
            continue
        kind, _, text = o.partition(":")
        if kind not in ("expect", "send"):
            sys.exit(f"pty_drive: bad step {o!r}")
        steps.append((kind, text.encode().decode("unicode_escape").encode()))
        i += 1

    pipe_r = pipe_w = None
    if stdout_path:
        pipe_r, pipe_w = os.pipe()
    pid, master = pty.fork()
    if pid == 0:
        try:
            if pipe_w is not None:
                os.dup2(pipe_w, 1)
                os.close(pipe_w)
                os.close(pipe_r)
            if stderr_path:
                fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 2)
                os.close(fd)
            # A shell starting a job in the background without job control ignores SIGINT, and
            # the child would inherit that: Ctrl-C must act as on a user's terminal.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execvp(command[0], command)
        finally:
            os._exit(127)

    if pipe_w is not None:
        os.close(pipe_w)
    screen = bytearray()
    piped = bytearray()
    open_fds = {master}
    if pipe_r is not None:
        open_fds.add(pipe_r)

    def pump(timeout):
        """Read what is available; False once nothing is left open."""
        if not open_fds:
            return False
        ready, _, _ = select.select(list(open_fds), [], [], timeout)
        for fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's other side is closed
                data = b""
            if not data:
                open_fds.discard(fd)
            elif fd == master:
                screen.extend(data)
            else:
                piped.extend(data)
        return True

    def save():
        if transcript_path:
            with open(transcript_path, "wb") as f:
                f.write(bytes(screen))
        if stdout_path:
            with open(stdout_path, "wb") as f:
                f.write(bytes(piped))

    pos = 0
    for kind, text in steps:
        if kind == "send":
            os.write(master, text)
            continue
        deadline = time.monotonic() + TIMEOUT
        while True:
            at = screen.find(text, pos)
            if at >= 0:
                pos = at + len(text)
                break
            if time.monotonic() > deadline or master not in open_fds:
                save()
                sys.stderr.write(
                    f"pty_drive: {text!r} never appeared; the terminal showed:\n"
                    f"{bytes(screen).decode(errors='replace')}\n"
                )
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                sys.exit(99)
            pump(0.2)

    deadline = time.monotonic() + TIMEOUT
    while open_fds and time.monotonic() < deadline:
        pump(0.2)
    if open_fds:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    save()
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
