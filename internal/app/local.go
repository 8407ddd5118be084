package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// RunOnce decodes one event from in, calls a function's handler with it and
// writes the answer to out: how a function's local main (built without the
// ycf tag) runs it as the platform would. It returns the exit code.
func RunOnce[E, R any](ctx context.Context, in io.Reader, out, errOut io.Writer, handler func(context.Context, *E) (R, error)) int {
	var ev E
	if err := json.NewDecoder(in).Decode(&ev); err != nil {
		fmt.Fprintln(errOut, "read event:", err)
		return 2
	}
	resp, err := handler(ctx, &ev)
	if err != nil {
		fmt.Fprintln(errOut, "handler:", err)
		return 1
	}
	if err := json.NewEncoder(out).Encode(resp); err != nil {
		fmt.Fprintln(errOut, "write answer:", err)
		return 1
	}
	return 0
}
