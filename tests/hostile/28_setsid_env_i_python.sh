#!/bin/bash
# Issue 28: a "python" whose grandchild leaves the process group (setsid) and the run id
# (env -i), then hangs. $SM120_HOSTILE_PIDS names a file: the grandchild's pid, then this one's.
setsid env -i /bin/sleep 300 &
echo $! >"$SM120_HOSTILE_PIDS"
echo $$ >>"$SM120_HOSTILE_PIDS"
sleep 300
