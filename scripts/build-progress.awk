# Turns `go build -v` output into a few lines: each module the first time
# one of its packages compiles ("compiling google.golang.org/grpc"), the
# standard library and this module by name. Any other line (an error, a
# download) passes through unchanged.
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
	if (!(what in seen)) {
		seen[what] = 1
		print "  compiling " what
		fflush()
	}
	next
}
{ print; fflush() }
