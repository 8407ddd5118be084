#!/usr/bin/env bash
# Builds ./transcriber for `make run` and says what it is doing: the first
# build on a machine downloads the modules (about 120 MB) and compiles
# them, the cloud SDKs and the embedded SQLite among them (a minute or two
# on two cores); later builds reuse Go's caches and take seconds.
#
# On a first build the standard library compiles while the modules
# download: `go build` downloads every module before it compiles anything,
# and the cores would wait on the network.
#
#   GO=go    the go command
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
out=transcriber
pkg=./cmd/transcriber

# STD_ROOTS are the standard packages of the binary that no other of its
# standard packages imports: building them builds all the standard library
# it needs (TestBuildLocalStdRoots keeps the list whole).
STD_ROOTS="database/sql embed encoding/base32 encoding/xml flag go/token hash/fnv html/template
io/ioutil log/slog net/http/httputil os/exec os/signal os/user runtime/debug runtime/pprof"

start=$(date +%s)
if GOPROXY=off $GO list -deps "$pkg" >/dev/null 2>&1; then
	echo "building ./$out"
else
	echo "building ./$out for the first time: downloading the modules (about 120 MB) while the standard library compiles, then compiling the modules (a minute or two; later builds take seconds)"
	# shellcheck disable=SC2086 # one argument a package
	$GO build $STD_ROOTS &
	std=$!
	dl=0
	$GO list -deps "$pkg" >/dev/null || dl=$?
	wait "$std" || true # what it did not build, the build below does
	if [ "$dl" -ne 0 ]; then
		exit "$dl" # go list said why above: no route to the module proxy, a broken source file
	fi
	echo "  downloaded the modules and compiled the standard library in $(($(date +%s) - start)) s"
fi
$GO build -v -o "$out" "$pkg" 2>&1 | awk -f scripts/build-progress.awk
echo "built ./$out in $(($(date +%s) - start)) s"
