#!/usr/bin/env bash
# Builds each dist/<name>.zip the way Cloud Functions does (docs/platform.md,
# "Cloud Functions: the Go build"; docs/deploy.md, "The platform build,
# emulated"): unpacked, Go 1.23.9, -buildmode=plugin, the
# ycf tag, an empty build cache, one CPU. Twice per zip: go.mod as shipped,
# and with its `go` line removed (the docs say go.mod must not name a Go
# version), both under -mod=mod since the builder's flags are unknown.
# Prints the time of each build against the builder's 5 minutes at half a
# CPU (one CPU here, so the estimate is twice the time measured) and exits
# non-zero if a build fails, or if the zip as shipped (the form that
# deploys) is estimated over the limit; the no-go-line form, a fallback, is
# only flagged.
#
# Module downloads are not build time: the module cache (GOMODCACHE) is
# shared and filled before the clock starts; only GOCACHE starts empty.
# These two forms build without the zip's vendor/ (deleted after
# extracting), as a builder that ignores it would.
#
# A third form, vendored, builds the zip as shipped with its vendor/ and
# no way to download: an empty module cache, GOPROXY=off, the runtime's
# toolchain run directly (GOTOOLCHAIN=local) and -mod=vendor. Before the
# clock it also checks that the go command's default flags pick vendor/
# on their own (go list under the same conditions, without -mod).
#
#   FUNCTIONS="api ingest poll"   which zips (default: every dist/*.zip)
#   VARIANTS="shipped no-go-line vendored"
#                                 which forms (default: all three)
#   CPU=0                         the CPU the builds are pinned to (taskset)
#   SPLIT=2                       run the zips in two halves at once, each
#                                 pinned to its own CPU (CPU 0 and 1): half the
#                                 wall time on a machine with two CPUs; each
#                                 build still has one CPU to itself
#   GO_RUNTIME=go1.23.9           the runtime's toolchain
#   TIME_LIMIT=fail               fail when the zip as shipped is estimated over
#                                 the limit; TIME_LIMIT=warn only says so (CI:
#                                 a shared machine's timings vary by a third
#                                 from run to run, so there a time over the
#                                 limit is reported, and only a failed build
#                                 fails)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
GO_RUNTIME=${GO_RUNTIME:-go1.23.9}
VARIANTS=${VARIANTS:-shipped no-go-line vendored}
CPU=${CPU:-0}
limit=300 # seconds: the builder's limit, at half a CPU

if [ -z "${FUNCTIONS:-}" ]; then
  FUNCTIONS=$(for z in "$DIST"/*.zip; do [ -e "$z" ] && basename "$z" .zip; done | tr '\n' ' ')
fi
if [ -z "$FUNCTIONS" ]; then
  echo "emulate-build: no zips in $DIST/: run make package first" >&2
  exit 1
fi

if [ "${SPLIT:-1}" = 2 ] && [ "$(nproc)" -ge 2 ] && [ "$(wc -w <<<"$FUNCTIONS")" -ge 2 ]; then
  # shellcheck disable=SC2206
  all=($FUNCTIONS)
  half=$(((${#all[@]} + 1) / 2))
  logs=$(mktemp -d)
  FUNCTIONS="${all[*]:0:$half}" SPLIT=1 CPU=0 "$0" >"$logs/a" 2>&1 &
  a=$!
  FUNCTIONS="${all[*]:$half}" SPLIT=1 CPU=1 "$0" >"$logs/b" 2>&1 &
  b=$!
  status=0
  wait "$a" || status=1
  wait "$b" || status=1
  cat "$logs/a"
  echo
  cat "$logs/b"
  rm -rf "$logs"
  exit "$status"
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"' EXIT

zipdir="$work/zipdir"
$GO build -o "$zipdir" scripts/zipdir/main.go

# One CPU, as far as this machine allows; the platform gives half of one.
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c "$CPU")
else
  echo "emulate-build: taskset not found: builds are limited by GOMAXPROCS=1 only" >&2
fi
timer=()
if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f '%M' -o "$work/rss"); fi

export GOTOOLCHAIN=$GO_RUNTIME CGO_ENABLED=1 GOMAXPROCS=1 GOFLAGS=-mod=mod
GOMODCACHE=$($GO env GOMODCACHE)
export GOMODCACHE
echo "emulate-build: $($GO version) (toolchain $GO_RUNTIME), module cache $GOMODCACHE, ${pin[*]:-no taskset}"
# The vendored form runs the runtime's go directly: with an empty module
# cache and no proxy, GOTOOLCHAIN could not fetch it.
runtime_go="$($GO env GOROOT)/bin/go"
empty_modcache="$work/modcache-empty"
mkdir -p "$empty_modcache"
offline=(env GOTOOLCHAIN=local GOPROXY=off GOMODCACHE="$empty_modcache")

rows=()
status=0
for name in $FUNCTIONS; do
  zip="$DIST/$name.zip"
  if [ ! -f "$zip" ]; then
    echo "emulate-build: $zip does not exist: run make package first" >&2
    exit 1
  fi
  for variant in $VARIANTS; do
    case "$variant" in shipped | no-go-line | vendored) ;; *)
      echo "emulate-build: unknown variant $variant (shipped, no-go-line, vendored)" >&2
      exit 2
      ;;
    esac
    dir="$work/$name-$variant"
    mkdir -p "$dir"
    "$zipdir" extract "$zip" "$dir"
    if [ "$variant" = no-go-line ]; then
      sed -i -e '/^go [0-9]/d' -e '/^toolchain /d' "$dir/go.mod"
    fi
    # go runs the build: the vendored form offline, the others with downloads.
    go=("$GO")
    label="$name ($variant)"
    if [ "$variant" = vendored ]; then
      go=("${offline[@]}" GOFLAGS=-mod=vendor "$runtime_go")
      if [ ! -f "$dir/vendor/modules.txt" ]; then
        echo "emulate-build: $label: the zip has no vendor/modules.txt: run make package" >&2
        rows+=("$(printf '%-8s %-11s %9s %8s %8s %7s  %s' "$name" "$variant" "-" "-" "-" "-" "FAIL (no vendor/)")")
        status=1
        continue
      fi
      if ! (cd "$dir" && "${offline[@]}" GOFLAGS= GOCACHE="$work/cache-list" "$runtime_go" list -tags ycf -deps . >/dev/null 2>"$work/err"); then
        echo "emulate-build: $label: offline, the default flags do not build from vendor/:" >&2
        cat "$work/err" >&2
        status=1
      fi
    else
      rm -rf "$dir/vendor"
    fi
    cp "$dir/go.mod" "$work/go.mod.before"

    # Downloads first, outside the clock (they land in the shared module
    # cache). As shipped, the package must also resolve without -mod=mod:
    # that is the go command's default, and the builder may use it.
    if [ "$variant" = shipped ] &&
      ! (cd "$dir" && GOFLAGS=-mod=readonly "$GO" list -tags ycf -deps . >/dev/null 2>"$work/err"); then
      echo "emulate-build: $label: go list -mod=readonly failed:" >&2
      cat "$work/err" >&2
      status=1
    fi
    rstart=$(date +%s%N)
    if ! (cd "$dir" && GOCACHE="$work/cache-list" "${go[@]}" list -tags ycf -deps . >/dev/null 2>"$work/err"); then
      echo "emulate-build: $label: resolving the imports failed:" >&2
      cat "$work/err" >&2
      rows+=("$(printf '%-8s %-11s %9s %8s %8s %7s  %s' "$name" "$variant" "-" "-" "-" "-" "FAIL (go list)")")
      status=1
      continue
    fi

    resolve=$(awk -v a="$rstart" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')

    cache="$work/cache-$name-$variant" # empty: the build starts cold
    mkdir -p "$cache"
    start=$(date +%s%N)
    ok=1
    (cd "$dir" && GOCACHE="$cache" "${timer[@]}" "${pin[@]}" "${go[@]}" build -buildmode=plugin -tags ycf -o /dev/null . \
      >"$work/log" 2>&1) || ok=0
    end=$(date +%s%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
    est=$(awk -v s="$secs" 'BEGIN {printf "%.0f", s * 2}')
    rss="-"
    if [ ${#timer[@]} -gt 0 ] && [ -s "$work/rss" ]; then
      rss=$(awk 'END {printf "%d MB", $1 / 1024}' "$work/rss")
    fi
    result=pass
    if [ "$ok" = 0 ]; then
      result=FAIL
      status=1
      echo "emulate-build: $label: the build failed:" >&2
      grep -v '^Command exited' "$work/log" >&2 || true
    elif [ "$est" -gt "$limit" ] && [ "$variant" = shipped ] && [ "${TIME_LIMIT:-fail}" != warn ]; then
      result="FAIL (over ${limit} s at half a CPU)"
      status=1
    elif [ "$est" -gt "$limit" ]; then
      result="pass, but OVER ${limit} s at half a CPU"
    fi
    if ! cmp -s "$work/go.mod.before" "$dir/go.mod"; then
      gonow=$(awk '$1 == "go" {print $2}' "$dir/go.mod")
      result="$result; go.mod rewritten by -mod=mod (go line now: ${gonow:-none})"
      echo "emulate-build: $label: -mod=mod rewrote go.mod:"
      diff -u "$work/go.mod.before" "$dir/go.mod" | sed -n '3,$p' | grep '^[-+]' || true
    fi
    rows+=("$(printf '%-8s %-11s %9s %8s %8s %7s  %s' "$name" "$variant" "$resolve" "$secs" "$est" "$rss" "$result")")
    echo "emulate-build: $label: resolve ${resolve} s; build ${secs} s on one CPU, ~${est} s at half a CPU: $result"
    chmod -R u+w "$cache" 2>/dev/null || true
    rm -rf "$cache" "$dir"
  done
done

echo
echo "Plugin builds with $GO_RUNTIME, -tags ycf, empty GOCACHE, one CPU (limit: ${limit} s at half a CPU)."
echo "resolve: go list -deps before the clock starts (module downloads into the shared cache; not build time)"
printf '%-8s %-11s %9s %8s %8s %7s  %s\n' function variant "resolve s" "1 CPU s" "½ CPU s" "max RSS" result
for r in "${rows[@]}"; do echo "$r"; done
exit "$status"
