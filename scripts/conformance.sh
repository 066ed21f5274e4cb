#!/bin/sh
# Runs the OCI runtime-tools validation suite against one or more runtimes
# and prints, for each, how many checks passed, failed and were skipped.
#
#   scripts/conformance.sh [-k] NAME=BINARY [NAME=BINARY ...]
#
# BINARY "@runc" is runc built from the module cache at the version
# go.mod pins (libcontainer's own command line, the reference). With two
# runtimes, the script fails when the first passes fewer checks than the
# second.
#
# The suite is built from its Go module (a pinned pseudo-version) in
# $CONFORMANCE_DIR (default /tmp/cordon-conformance), once. Each validation
# program prints TAP; the summary counts "ok" lines that are not skips as
# passed, "not ok" lines as failed, "# SKIP" lines as skipped, and a program
# that printed no plan (it crashed) as one failure. The full TAP of each
# runtime is kept in $CONFORMANCE_DIR/NAME.tap. With -k the per-test lines
# of failures are printed too.
set -eu

RT_MODULE=github.com/opencontainers/runtime-tools
RT_VERSION=v0.9.1-0.20251205004911-5e639034dcdc
dir=${CONFORMANCE_DIR:-/tmp/cordon-conformance}
verbose=0
if [ "${1:-}" = "-k" ]; then
	verbose=1
	shift
fi
[ $# -gt 0 ] || { echo "usage: $0 [-k] NAME=BINARY ..." >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "conformance: the suite needs root" >&2; exit 2; }

suite=$dir/runtime-tools
if [ ! -x "$suite/runtimetest" ] || [ ! -f "$suite/.built" ]; then
	src=$(go mod download -json "$RT_MODULE@$RT_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[ -n "$src" ] || { echo "conformance: cannot download $RT_MODULE@$RT_VERSION" >&2; exit 1; }
	rm -rf "$suite"
	mkdir -p "$dir"
	cp -r "$src" "$suite"
	chmod -R u+w "$suite"
	# The module zip keeps vendor/modules.txt but not the vendored code.
	rm -rf "$suite/vendor"
	(cd "$suite" && GOFLAGS=-mod=mod make -s runtimetest validation-executables >/dev/null)
	touch "$suite/.built"
fi

# runc_from_module builds the runc command of the pinned libcontainer.
runc_from_module() {
	version=$(go list -m -f '{{.Version}}' github.com/opencontainers/runc)
	out=$dir/runc-$version
	if [ ! -x "$out" ]; then
		src=$(go mod download -json "github.com/opencontainers/runc@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
		rm -rf "$dir/runc-src"
		cp -r "$src" "$dir/runc-src"
		chmod -R u+w "$dir/runc-src"
		rm -rf "$dir/runc-src/vendor"
		(cd "$dir/runc-src" && GOFLAGS=-mod=mod go build -tags seccomp -o "$out" .)
		rm -rf "$dir/runc-src"
	fi
	echo "$out"
}

mkdir -p "$dir"
resolved=""
for pair in "$@"; do
	bin=${pair#*=}
	[ "$bin" = "@runc" ] && bin=$(runc_from_module)
	resolved="$resolved ${pair%%=*}=$bin"
done

cd "$suite"
tests=$(find validation -name '*.t' | sort)
counts=""
for pair in $resolved; do
	name=${pair%%=*}
	bin=${pair#*=}
	case $bin in /*) ;; *) bin=$(command -v "$bin") ;; esac
	tap=$dir/$name.tap
	: >"$tap"
	start=$(date +%s)
	for t in $tests; do
		echo "# file $t" >>"$tap"
		# A hung program must not hang the suite.
		RUNTIME=$bin timeout 120 "./$t" >>"$tap" 2>/dev/null || true
		echo "# end $t" >>"$tap"
	done
	end=$(date +%s)
	awk -v name="$name" -v secs=$((end - start)) -v verbose="$verbose" '
		/^# file / { file = $3; plan = 0; next }
		/^# end / { if (!plan) { failed++; crashed = crashed " " file }; next }
		/^1\.\.[0-9]+/ { plan = 1; next }
		/^not ok/ { failed++; if (verbose) print "  " file ": " $0; next }
		/^ok/ { if ($0 ~ /# [Ss][Kk][Ii][Pp]/) skipped++; else passed++; next }
		END {
			printf "%s: %d passed, %d failed, %d skipped (%ds)\n", name, passed, failed, skipped, secs
			if (crashed != "") printf "  %s: programs without a TAP plan:%s\n", name, crashed
		}' "$tap" | tee "$dir/$name.summary"
	counts="$counts $(sed -n '1s/^[^:]*: \([0-9]*\) passed.*/\1/p' "$dir/$name.summary")"
done
set -- $counts
if [ $# -ge 2 ] && [ "$1" -lt "$2" ]; then
	echo "conformance: the first runtime passed fewer checks ($1) than the second ($2)" >&2
	exit 1
fi
