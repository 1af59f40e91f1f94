#!/usr/bin/env bash
# Installs what building and testing pysb-bpf needs on Debian 12, as root.
# Idempotent and silent when nothing is missing; the make targets call it.
set -euo pipefail

packages=(
	clang llvm make gcc pkg-config
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libcmocka-dev libjansson-dev liburing-dev libmicrohttpd-dev \
	bubblewrap firejail gnuplot-nox
	qemu-system-x86 busybox-static cpio xz-utils kmod binutils util-linux
	python3 iproute2 bash-builtins
)

missing=()
for p in "${packages[@]}"; do
	# Status "install ok installed" is the only state in which the package is usable.
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run 'scripts/deps.sh' as root (apt-get install)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
