#!/usr/bin/env bash
# Regenerate the wheel's data files (completions and man pages) from the binary's clap
# definitions. Usage: packaging/gen-wheel-data.sh [PATH/TO/sm120-doctor]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
if [ -z "$bin" ]; then
  cargo build --quiet
  bin=target/debug/sm120-doctor
fi
share=packaging/wheel-data/data/share
rm -rf "$share"
mkdir -p "$share/man/man1" "$share/bash-completion/completions" \
  "$share/zsh/site-functions" "$share/fish/vendor_completions.d"
"$bin" man -o "$share/man/man1"
"$bin" completions bash > "$share/bash-completion/completions/sm120-doctor"
"$bin" completions zsh > "$share/zsh/site-functions/_sm120-doctor"
"$bin" completions fish > "$share/fish/vendor_completions.d/sm120-doctor.fish"
find "$share" -type f | sort
