#!/bin/sh
# Issue 18 item 4: a "python" that floods stdout. The collector used to keep all of it (4.2 GB,
# then abort, no file written); it now keeps 4 MiB, stops the child and says so.
while :; do
  echo "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
done
