#!/usr/bin/env bash
# Stages, on a machine with network, what scripts/gpu-check.sh needs on a GPU machine
# that has none, into .gpu/ (git-ignored; the device tool takes it along when named in
# carry, [".gpu"]):
#
#   bash scripts/gpu-stage.sh [PACKAGE...]
#
#   .gpu/yaml/    Debian's libyaml-dev and libyaml-0-2 (apt-get download), unpacked with
#                 dpkg -x: yaml.h and libyaml.a, so opspec-gen builds there, linked
#                 statically (about 0.6 MB)
#   .gpu/wheels/  wheels of the PACKAGEs named (none by default: the lent machine's python3
#                 has what the check needs), for CPython 3.12 on x86-64 Linux
set -euo pipefail
cd "$(dirname "$0")/.."
G=.gpu
rm -rf "$G/yaml" "$G/debs"
mkdir -p "$G/yaml" "$G/debs" "$G/wheels"
(cd "$G/debs" && { apt-get download libyaml-dev libyaml-0-2 2> /dev/null || { apt-get update -qq && apt-get download libyaml-dev libyaml-0-2; }; })
for deb in "$G"/debs/*.deb; do dpkg -x "$deb" "$G/yaml"; done
ls "$G/yaml/usr/include/yaml.h" "$G"/yaml/usr/lib/*/libyaml.a
if [ $# -gt 0 ]; then
  python3 -m pip download --quiet --dest "$G/wheels" --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 "$@"
  ls "$G/wheels"
fi
echo "staged in $G: $(du -sh "$G" | cut -f1)"
