//go:build !ycf

package main

import (
	"context"
	"os"

	"transcriber/internal/app"
)

// main runs the handler on one event from stdin; the platform builds with
// the ycf tag and never sees it.
func main() {
	os.Exit(app.RunOnce(context.Background(), os.Stdin, os.Stdout, os.Stderr, Handler))
}
