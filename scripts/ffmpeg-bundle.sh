#!/usr/bin/env bash
# Finds the static ffmpeg and ffprobe the ingest and poll zips carry, and
# prints the directory that holds them (docs/deploy.md, "The ffmpeg
# bundle"). The archive is named in the Makefile by URL and SHA-256:
#
#   FFMPEG_ARCHIVE=PATH   a local copy of the archive (offline builds); it must
#                         match FFMPEG_SHA256 like a download
#   FFMPEG_URL            where to download it, FFMPEG_URL_FALLBACK the
#                         second place (johnvansickle.com moves a release to
#                         old-releases/ when the next one comes out)
#   FFMPEG_SHA256         the archive's SHA-256: the pin, checked every time
#   FFMPEG_CACHE          where downloads and the unpacked binaries are kept
#                         (default ~/.cache/transcriber): downloaded once
#
# Exits 3 when the archive can be neither found nor downloaded, so a caller
# can tell "no network" from a wrong or broken archive (exit 1).
set -euo pipefail

: "${FFMPEG_URL:?FFMPEG_URL is not set (the Makefile sets it)}"
: "${FFMPEG_SHA256:?FFMPEG_SHA256 is not set (the Makefile sets it)}"
FFMPEG_CACHE=${FFMPEG_CACHE:-$HOME/.cache/transcriber}
mkdir -p "$FFMPEG_CACHE"

sha() { sha256sum "$1" | cut -d' ' -f1; }
say() { echo "ffmpeg-bundle: $*" >&2; }

out="$FFMPEG_CACHE/ffmpeg-${FFMPEG_SHA256:0:16}"
if [ -x "$out/ffmpeg" ] && [ -x "$out/ffprobe" ] && [ -f "$out/.verified" ]; then
  echo "$out"
  exit 0
fi

if [ -n "${FFMPEG_ARCHIVE:-}" ]; then
  archive=$FFMPEG_ARCHIVE
  if [ ! -f "$archive" ]; then
    say "FFMPEG_ARCHIVE=$archive does not exist"
    exit 1
  fi
else
  archive="$FFMPEG_CACHE/$(basename "$FFMPEG_URL")"
  if [ ! -f "$archive" ] || [ "$(sha "$archive")" != "$FFMPEG_SHA256" ]; then
    tmp="$archive.part"
    got=
    for url in "$FFMPEG_URL" ${FFMPEG_URL_FALLBACK:-}; do
      say "downloading $url"
      if curl -fsSL --retry 2 --connect-timeout 20 -o "$tmp" "$url"; then
        got=1
        break
      fi
      say "could not download $url"
    done
    if [ -z "$got" ]; then
      rm -f "$tmp"
      say "the archive could not be downloaded; download it elsewhere and set FFMPEG_ARCHIVE=PATH"
      exit 3
    fi
    mv "$tmp" "$archive"
  fi
fi

got=$(sha "$archive")
if [ "$got" != "$FFMPEG_SHA256" ]; then
  say "$archive has SHA-256 $got, not the pinned $FFMPEG_SHA256: refused"
  say "(another build? set FFMPEG_URL and FFMPEG_SHA256 for it, in the Makefile or on the command line)"
  exit 1
fi

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
case "$archive" in
  *.tar.xz) tar -xJf "$archive" -C "$out.tmp" ;;
  *.tar.gz | *.tgz) tar -xzf "$archive" -C "$out.tmp" ;;
  *) say "unknown archive type: $archive (want .tar.xz or .tar.gz)"; exit 1 ;;
esac
for b in ffmpeg ffprobe; do
  found=$(find "$out.tmp" -type f -name "$b" | head -n 1)
  if [ -z "$found" ]; then
    say "$archive holds no $b"
    exit 1
  fi
  mv "$found" "$out.tmp/$b.bin"
done
find "$out.tmp" -mindepth 1 ! -name '*.bin' -exec rm -rf {} + 2>/dev/null || true
for b in ffmpeg ffprobe; do
  mv "$out.tmp/$b.bin" "$out.tmp/$b"
  chmod 0755 "$out.tmp/$b"
  if command -v file >/dev/null && ! file -L "$out.tmp/$b" | grep -Eq 'statically linked|static-pie linked'; then
    say "$b in $archive is not statically linked: the runtime (Ubuntu 22.04, no layers) may lack its libraries"
    exit 1
  fi
done
touch "$out.tmp/.verified"
rm -rf "$out"
mv "$out.tmp" "$out"
say "verified $(basename "$archive") (sha256 $FFMPEG_SHA256): $("$out/ffmpeg" -hide_banner -version 2>/dev/null | head -n 1)"
echo "$out"
