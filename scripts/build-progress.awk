# Turns `go build -v` output into a few lines: each module the first time
# one of its packages compiles, the standard library and this module by
# name, joined in lines of at most 78 characters:
#
#   compiling golang.org/x/sys, modernc.org/libc, google.golang.org/grpc,
#     github.com/ydb-platform/ydb-go-sdk, transcriber
#
# Any other line (an error, a download) passes through unchanged, on a
# line of its own.
#
#   go build -v ./cmd/transcriber 2>&1 | awk -f scripts/build-progress.awk

# A package path is one word with no colon; a compiler error has a colon
# and spaces.
/^[A-Za-z0-9._~\/-]+$/ {
	n = split($0, p, "/")
	if (p[1] == "transcriber") {
		what = "transcriber"
	} else if (p[1] !~ /\./) {
		what = "the standard library"
	} else if ((p[1] == "github.com" || p[1] == "golang.org" || p[1] == "gitlab.com") && n >= 3) {
		what = p[1] "/" p[2] "/" p[3]
	} else if (n >= 2) {
		what = p[1] "/" p[2]
	} else {
		what = p[1]
	}
	if (what in seen) {
		next
	}
	seen[what] = 1
	if (col == 0) {
		printf "  compiling %s", what
		col = 12 + length(what)
	} else if (col + 2 + length(what) > 78) {
		printf ",\n    %s", what
		col = 4 + length(what)
	} else {
		printf ", %s", what
		col += 2 + length(what)
	}
	fflush()
	next
}
{
	if (col > 0) {
		print ""
		col = 0
	}
	print
	fflush()
}
END {
	if (col > 0) {
		print ""
	}
}
