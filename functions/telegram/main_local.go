//go:build !ycf

package main

import (
	"context"
	"os"

	"transcriber/internal/app"
)

// main runs the handler once on an event read from standard input, with the
// configuration from the environment. The platform builds with the ycf tag
// and never sees this file.
func main() {
	os.Exit(app.RunOnce(context.Background(), os.Stdin, os.Stdout, os.Stderr, Handler))
}
