#!/bin/sh
# scripts/deps.sh build|test installs, on Debian and Ubuntu, what is missing
# for building cordon and running `make run`'s demo (build), or for that and
# every test and benchmark too (test). Everything else comes from the Go
# module proxy. `build` installs no service; `test` installs containerd and
# openssh-server, whose packages start their daemons on an ordinary Debian
# machine.
set -eu

case "${1:-}" in
build | test) ;;
*)
	echo "usage: scripts/deps.sh build|test" >&2
	exit 2
	;;
esac

need=""
pkg-config --exists libseccomp 2>/dev/null || need="$need libseccomp-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v gcc >/dev/null 2>&1 || need="$need gcc libc6-dev"
# cordon is linked statically (Makefile): libc.a and libseccomp.a.
if command -v gcc >/dev/null 2>&1; then
	[ -f "$(gcc -print-file-name=libc.a)" ] || need="$need libc6-dev"
	[ -f "$(gcc -print-file-name=libseccomp.a)" ] || need="$need libseccomp-dev"
fi
# go build stamps the commit of a git checkout, with git.
[ ! -e .git ] || command -v git >/dev/null 2>&1 || need="$need git"
if [ "$1" = test ]; then
	# The benchmarks and some integration tests compare with bubblewrap; the
	# integration tests run real tools inside the sandbox.
	command -v bwrap >/dev/null 2>&1 || need="$need bubblewrap"
	command -v git >/dev/null 2>&1 || need="$need git"
	command -v python3 >/dev/null 2>&1 || need="$need python3"
	command -v ps >/dev/null 2>&1 || need="$need procps"
	command -v unshare >/dev/null 2>&1 || need="$need util-linux"
	# The adversarial suite tries sudo and su from inside the sandbox.
	command -v sudo >/dev/null 2>&1 || need="$need sudo"
	command -v su >/dev/null 2>&1 || need="$need util-linux"
	# The OCI runtime tests run cordon under a real containerd 1.6 (with ctr),
	# on a busybox image made from Debian's static busybox.
	command -v containerd >/dev/null 2>&1 || need="$need containerd"
	dpkg -s busybox-static >/dev/null 2>&1 || need="$need busybox-static"
	# The CRI tests (crictl, built by the tests from its module) run pods on a
	# pod network of CNI's bridge and host-local plugins; cordon confines an
	# agent pod's egress with nftables rules, installed with nft.
	[ -x /usr/lib/cni/bridge ] || need="$need containernetworking-plugins"
	command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || need="$need nftables"
	# darwin's tests compare cordon's Seatbelt profiles with the ones
	# sandbox-runtime's npm package generates, under node (darwin/srt_test.go;
	# npm below).
	command -v node >/dev/null 2>&1 || need="$need nodejs"
	# The end-to-end tests install Claude Code with npm (below;
	# integration/claudecode), and the masked credentials test undici (for
	# node's fetch through the proxy before Node 24); the benchmarks compare
	# with Claude Code's own sandbox, which needs socat (and bubblewrap).
	command -v socat >/dev/null 2>&1 || need="$need socat"
	# The network tests: a veth pair into a namespace of servers, real clients.
	command -v ip >/dev/null 2>&1 || need="$need iproute2"
	command -v curl >/dev/null 2>&1 || need="$need curl"
	# an upstream (corporate) proxy for the network tests: the binary alone,
	# which starts no daemon
	command -v tinyproxy >/dev/null 2>&1 || need="$need tinyproxy-bin"
	command -v ssh >/dev/null 2>&1 || need="$need openssh-client"
	[ -x /usr/sbin/sshd ] || need="$need openssh-server"
	# The ordinary-work suite runs what agents run every day: npm, make, a C
	# build, a Python venv that installs a local package offline (setuptools
	# and wheel from Debian's wheel directory), patch, ripgrep.
	command -v npm >/dev/null 2>&1 || need="$need npm"
	command -v make >/dev/null 2>&1 || need="$need make"
	command -v patch >/dev/null 2>&1 || need="$need patch"
	command -v rg >/dev/null 2>&1 || need="$need ripgrep"
	/usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need="$need python3-venv"
	ls /usr/share/python-wheels/wheel-*.whl >/dev/null 2>&1 || need="$need python3-wheel-whl"
fi
[ -z "$need" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "cordon: missing:$need (install them with your package manager)" >&2
	exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing:$need"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $need >/dev/null
