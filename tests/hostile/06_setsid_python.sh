#!/bin/bash
# Issue 18 item 6: a "python" that leaves a grandchild in a new session (setsid), then hangs.
# $SM120_HOSTILE_PIDS names a file: the grandchild's pid, then this script's own.
setsid sleep 300 &
echo $! >"$SM120_HOSTILE_PIDS"
echo $$ >>"$SM120_HOSTILE_PIDS"
sleep 300
