#!/usr/bin/env bash
# Builds one zip per Cloud Function in dist/<name>.zip, in the layout the
# platform builds from source (docs/deploy.md):
#
#   go.mod, go.sum            as in the repository
#   index.go                  functions/<name>/index.go, unchanged: entrypoint index.Handler
#   internal/...              every package of this module the function imports
#                             (under the ycf tag), at its path: no _test.go, no
#                             testdata, no main_local.go
#   vendor/                   `go mod vendor` of that tree: the packages of other
#                             modules it imports, and vendor/modules.txt, so the
#                             builder needs no download (docs/deploy.md,
#                             "Vendored dependencies")
#   bin/ffmpeg, bin/ffprobe   for ingest and poll: the static Linux x86-64 build
#                             the Makefile pins by URL and SHA-256, downloaded
#                             once and verified by scripts/ffmpeg-bundle.sh
#                             (FFMPEG_ARCHIVE=PATH for a local copy); mode 0755
#
# Then prints each zip's size, SHA-256 and upload path (direct ≤ 3.5 MB, via
# Object Storage ≤ 128 MB; unpacked ≤ 680 MB), failing if a limit is broken.
#
#   FUNCTIONS="api ingest poll"    which functions (default: every functions/*/index.go)
#   FFMPEG_BUNDLE_DIR=DIR          a directory holding static ffmpeg and ffprobe,
#                                  instead of the pinned archive
#   FFMPEG_OPTIONAL=1              when the archive cannot be had (no network),
#                                  build the zips without it and say so, instead
#                                  of failing (CI on a machine that cannot reach
#                                  the archive's host)
#   FFMPEG_FUNCTIONS="ingest poll" which zips get them
#   DIST=dist                      where the zips go
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

GO=${GO:-go}
DIST=${DIST:-dist}
module=$($GO list -m)

if [ -z "${FUNCTIONS:-}" ]; then
  FUNCTIONS=$(for f in functions/*/index.go; do basename "$(dirname "$f")"; done | tr '\n' ' ')
fi
FFMPEG_FUNCTIONS=${FFMPEG_FUNCTIONS-ingest poll}
needs_ffmpeg() { case " $FFMPEG_FUNCTIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

direct_limit=$((3584 * 1024))          # 3.5 MB: package uploaded with the function
storage_limit=$((128 * 1024 * 1024))   # 128 MB: package through Object Storage
unpacked_limit=$((680 * 1024 * 1024))  # 680 MB unpacked

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

zipdir="$work/zipdir"
$GO build -o "$zipdir" scripts/zipdir/main.go

if [ -z "${FFMPEG_BUNDLE_DIR:-}" ] && [ -n "$FFMPEG_FUNCTIONS" ]; then
  set +e
  FFMPEG_BUNDLE_DIR=$(scripts/ffmpeg-bundle.sh)
  got=$?
  set -e
  if [ "$got" -eq 3 ] && [ "${FFMPEG_OPTIONAL:-}" = 1 ]; then
    FFMPEG_BUNDLE_DIR=
    echo "package: the ffmpeg archive could not be had (FFMPEG_OPTIONAL=1): the zips of" \
      "$FFMPEG_FUNCTIONS are built WITHOUT bin/ffmpeg and bin/ffprobe; their sizes below are" \
      "without the about 150 MB unpacked (45 MB zipped) the bundle adds, and they must not be deployed" >&2
  elif [ "$got" -ne 0 ]; then
    echo "package: no ffmpeg bundle (see above); FFMPEG_ARCHIVE=PATH uses a local copy of the archive" >&2
    exit 1
  fi
fi
if [ -n "${FFMPEG_BUNDLE_DIR:-}" ]; then
  for b in ffmpeg ffprobe; do
    if [ ! -f "$FFMPEG_BUNDLE_DIR/$b" ] || [ ! -x "$FFMPEG_BUNDLE_DIR/$b" ]; then
      echo "package: FFMPEG_BUNDLE_DIR=$FFMPEG_BUNDLE_DIR has no executable $b" >&2
      exit 1
    fi
    if command -v file >/dev/null && ! file -L "$FFMPEG_BUNDLE_DIR/$b" | grep -Eq 'statically linked|static-pie linked'; then
      echo "package: warning: $FFMPEG_BUNDLE_DIR/$b does not look statically linked;" \
        "the runtime (Ubuntu 22.04, no layers) may lack its libraries" >&2
    fi
  done
fi

mkdir -p "$DIST"
status=0
for name in $FUNCTIONS; do
  src=functions/$name
  if [ ! -f "$src/index.go" ]; then
    echo "package: $src/index.go does not exist" >&2
    exit 1
  fi
  stage="$work/$name"
  mkdir -p "$stage"
  cp go.mod go.sum "$stage/"
  cp "$src/index.go" "$stage/index.go"

  # The module's packages the function imports when built as the platform
  # builds it (ycf tag), the function's own package aside: its index.go is
  # the zip root.
  $GO list -tags ycf -deps \
    -f '{{if not .Standard}}{{.ImportPath}} {{.Dir}} {{join .EmbedFiles " "}}{{end}}' \
    "./$src" >"$work/$name.deps"
  while read -r pkg dir embeds; do
    case "$pkg" in
      "$module/$src") continue ;;
      "$module"/*) ;;
      *) continue ;;
    esac
    rel=${dir#"$root"/}
    mkdir -p "$stage/$rel"
    # The package's own files only (subdirectories are other packages,
    # testdata is for tests), tests and local mains left out.
    find "$dir" -maxdepth 1 -type f ! -name '*_test.go' ! -name main_local.go \
      -exec cp -p -t "$stage/$rel" {} +
    # Files it embeds may live in subdirectories.
    for f in $embeds; do
      mkdir -p "$stage/$rel/$(dirname "$f")"
      cp -p "$dir/$f" "$stage/$rel/$f"
    done
  done <"$work/$name.deps"

  # Every package of other modules the staged tree imports, whatever its
  # build tags, and vendor/modules.txt: the go command builds from vendor/
  # by default (go.mod says go 1.14 or later, or no go line) and downloads
  # nothing. go.mod and go.sum stay as they are.
  if ! (cd "$stage" && GOFLAGS= "$GO" mod vendor) 2>"$work/$name.vendor.err"; then
    echo "package: go mod vendor failed for $name:" >&2
    cat "$work/$name.vendor.err" >&2
    exit 1
  fi
  if ! cmp -s go.mod "$stage/go.mod" || ! cmp -s go.sum "$stage/go.sum"; then
    echo "package: go mod vendor changed go.mod or go.sum of $name" >&2
    exit 1
  fi

  if needs_ffmpeg "$name"; then
    if [ -n "${FFMPEG_BUNDLE_DIR:-}" ]; then
      mkdir -p "$stage/bin"
      for b in ffmpeg ffprobe; do
        cp "$FFMPEG_BUNDLE_DIR/$b" "$stage/bin/$b"
        chmod 0755 "$stage/bin/$b"
      done
    else
      echo "package: WARNING: dist/$name.zip has no bin/ffmpeg or bin/ffprobe and WILL FAIL" \
        "in the cloud (/tmp is noexec and there are no layers)" >&2
    fi
  fi

  # Files get 0644 and directories 0755 whatever the umask; bin/ keeps 0755.
  find "$stage" -type d -exec chmod 0755 {} +
  find "$stage" -type f ! -path "$stage/bin/*" -exec chmod 0644 {} +

  out="$DIST/$name.zip"
  rm -f "$out"
  "$zipdir" create "$out" "$stage"

  size=$(stat -c %s "$out")
  unpacked=$("$zipdir" list "$out" | awk '$1 == "unpacked" {print $2}')
  sum=$(sha256sum "$out" | cut -d' ' -f1)
  if [ "$size" -le "$direct_limit" ]; then
    path="direct upload (≤ 3.5 MB)"
  elif [ "$size" -le "$storage_limit" ]; then
    path="needs Object Storage (> 3.5 MB, ≤ 128 MB)"
  else
    path="TOO LARGE: over the 128 MB limit"
    status=1
  fi
  if [ "$unpacked" -gt "$unpacked_limit" ]; then
    path="$path; TOO LARGE unpacked: over 680 MB"
    status=1
  fi
  files=$("$zipdir" list "$out" | grep -vc '^unpacked ')
  printf '%s: %d bytes (%s files, %d unpacked), sha256 %s, %s\n' \
    "$out" "$size" "$files" "$unpacked" "$sum" "$path"
done
exit "$status"
