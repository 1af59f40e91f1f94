#!/usr/bin/env bash
# Installs the Debian 12 packages one or more sets need, as root:
#   scripts/deps.sh [--check] [SET...]     SET: build, test, bench, docs (none: all four)
# build: compile pysb-bpf and its man page (plain `make` needs this set; it installs nothing).
# test:  unit tests (cmocka) and the VM the end-to-end suite boots (make check, make e2e).
# bench: the peers make bench measures against, and its plots.
# docs:  the figures of docs/figures (make figures; the rendered SVGs are committed).
# Idempotent and silent when nothing is missing; make check/e2e/bench/demo call it with the
# sets they need. --check lists what is missing and exits 1 instead of installing.
set -euo pipefail

usage() {
	echo "usage: scripts/deps.sh [--check] [build|test|bench|docs]..." >&2
	exit 2
}

declare -A sets=(
	[build]="clang llvm make gcc pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev
		libjansson-dev libmicrohttpd-dev libsystemd-dev help2man"
	[test]="clang-format libcmocka-dev liburing-dev qemu-system-x86 busybox-static cpio xz-utils kmod runc
		binutils util-linux python3 python3-pytest iproute2 bash-builtins jq btrfs-progs dosfstools
		dbus-daemon python3-dbus python3-gi"
	[bench]="bubblewrap firejail gnuplot-nox"
	[docs]="graphviz"
)

check_only=0
want=()
for a in "$@"; do
	case $a in
	--check) check_only=1 ;;
	build | test | bench | docs) want+=("$a") ;;
	-h | --help) usage ;;
	*)
		echo "deps: unknown set '$a'" >&2
		usage
		;;
	esac
done
[ ${#want[@]} -gt 0 ] || want=(build test bench docs)

packages=()
for s in "${want[@]}"; do
	# shellcheck disable=SC2206 # the sets are whitespace-separated package names
	packages+=(${sets[$s]})
done

missing=()
for p in "${packages[@]}"; do
	# Status "install ok installed" is the only state in which the package is usable.
	if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ $check_only -eq 1 ] || [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages for '${want[*]}': ${missing[*]};" \
		"run 'scripts/deps.sh ${want[*]}' as root (apt-get install)" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
