package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// RunOnce runs a function's handler on one JSON event from in, as the
// platform would (a function's main without the ycf tag), and returns the
// exit code.
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
