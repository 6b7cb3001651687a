#!/usr/bin/env bash
# Reach (issue 17): build the distributable wheel, install it the ways ML hosts install tools
# (pip into a clean venv, uv tool, pipx), run `sm120-doctor check --demo` from each, check the
# glibc floor, validate the Kubernetes manifest against the API schema, and run the node_exporter
# scrape test with the binary from the wheel. `pip install .` from the checkout is tested too.
# Everything it creates stays under target/reach/.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned to what the last passing clean-clone run (stop 40, 2026-12-04) installed, so a new
# release of a tool cannot break CI between two runs of the same commit; bump them on purpose.
MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.17.1
AUDITWHEEL_VERSION=6.8.2
UV_VERSION=0.13.9
PIPX_VERSION=1.18.4
KUBERNETES_VALIDATE_VERSION=1.37.0
work=target/reach
rm -rf "$work"
mkdir -p "$work"
say() { printf '\n== reach: %s\n' "$*"; }

say "tools (maturin, zig, auditwheel, uv, pipx, kubernetes-validate) in $work/tools"
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install -q --disable-pip-version-check \
  "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION" "auditwheel==$AUDITWHEEL_VERSION" \
  "uv==$UV_VERSION" "pipx==$PIPX_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
export PATH="$PWD/$work/tools/bin:$PATH"

say "build the wheel (zig links against glibc 2.17: manylinux2014)"
maturin build --release --locked --zig --compatibility manylinux2014 -o "$work/wheels"
wheel=$(ls "$work"/wheels/sm120_doctor-*.whl)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
case "$wheel" in
  *"sm120_doctor-$version-"*manylinux_2_17_x86_64*.whl) ;;
  *) echo "unexpected wheel name (version $version, manylinux_2_17 expected): $wheel" >&2; exit 1 ;;
esac
echo "wheel: $wheel ($(stat -c %s "$wheel") bytes)"

say "glibc floor of the binary in the wheel"
auditwheel show "$wheel" | tee "$work/auditwheel.txt"
grep -q 'manylinux_2_17_x86_64' "$work/auditwheel.txt"
mkdir -p "$work/unpacked"
python3 -m zipfile -e "$wheel" "$work/unpacked"
bin_in_wheel=$(find "$work/unpacked" -path '*.data/scripts/sm120-doctor' -type f)
floor=$(objdump -T "$bin_in_wheel" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
echo "highest versioned glibc symbol: $floor"
[ "$(printf '%s\nGLIBC_2.17\n' "$floor" | sort -V | tail -1)" = "GLIBC_2.17" ]
echo "wheel contents:"
python3 -m zipfile -l "$wheel"

demo() {
  # check --demo finds the allocator/IPC error: exit 1 is the expected outcome.
  local bin=$1 rc=0
  "$bin" --version
  "$bin" check --demo > "$work/demo.txt" || rc=$?
  [ "$rc" -eq 1 ] || { echo "check --demo exited $rc" >&2; cat "$work/demo.txt"; exit 1; }
  grep -q 'allocator_ipc · error' "$work/demo.txt"
  head -3 "$work/demo.txt"
}

say "pip install the wheel into a clean venv"
python3 -m venv "$work/venv-wheel"
"$work/venv-wheel/bin/pip" install -q --disable-pip-version-check "$wheel"
demo "$work/venv-wheel/bin/sm120-doctor"
for f in share/man/man1/sm120-doctor.1 share/man/man1/sm120-doctor-check.1 \
  share/bash-completion/completions/sm120-doctor share/zsh/site-functions/_sm120-doctor \
  share/fish/vendor_completions.d/sm120-doctor.fish; do
  test -s "$work/venv-wheel/$f" || { echo "missing from the venv: $f" >&2; exit 1; }
done
echo "man pages and completions installed under the venv's share/"

say "uv tool install the wheel"
export UV_TOOL_DIR="$PWD/$work/uv-tools" UV_TOOL_BIN_DIR="$PWD/$work/uv-bin"
uv tool install "$wheel"
demo "$UV_TOOL_BIN_DIR/sm120-doctor"

say "pipx install the wheel"
export PIPX_HOME="$PWD/$work/pipx" PIPX_BIN_DIR="$PWD/$work/pipx-bin" \
  PIPX_MAN_DIR="$PWD/$work/pipx-man" PIPX_COMPLETION_DIR="$PWD/$work/pipx-share"
pipx install "$wheel"
demo "$PIPX_BIN_DIR/sm120-doctor"
test -e "$PIPX_MAN_DIR/man1/sm120-doctor.1"
test -e "$PIPX_COMPLETION_DIR/bash-completion/completions/sm120-doctor"
echo "pipx linked the man pages (PIPX_MAN_DIR) and completions (PIPX_COMPLETION_DIR)"

say "pip install . (from this checkout, a native build) into a clean venv"
python3 -m venv "$work/venv-src"
"$work/venv-src/bin/pip" install -q --disable-pip-version-check .
demo "$work/venv-src/bin/sm120-doctor"

say "Kubernetes manifest against the API schema"
kubernetes-validate --strict deploy/kubernetes/*.yaml

say "node_exporter scrapes the metrics written by the wheel's binary"
SM120_DOCTOR_BIN="$PWD/$work/venv-wheel/bin/sm120-doctor" \
  cargo test --test packaging prometheus_node_exporter:: -- --nocapture

say "ok"
