package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"transcriber/internal/clock"
	"transcriber/internal/store"
	"transcriber/internal/store/storecheck"
	"transcriber/internal/store/ydb"
)

// scratchOpener opens a store set in a scratch directory, with the meter of
// its request units (nil: none); remove drops the directory and closes it.
type scratchOpener func(ctx context.Context, out io.Writer) (s store.Set, meter storecheck.Meter, remove func(context.Context) error, err error)

// ydbScratch opens scratch directories of the YDB at dsn.
func ydbScratch(dsn string) scratchOpener {
	return func(ctx context.Context, out io.Writer) (store.Set, storecheck.Meter, func(context.Context) error, error) {
		s, remove, err := ydb.OpenScratch(ctx, dsn, clock.System(), out)
		return s, ydb.Units, remove, err
	}
}

// checkStore runs the store probe in a scratch directory (made and
// migrated under ctx, removed under cleanupCtx) and, unless --json, prints
// each call's request units beside docs/database.md's estimate.
func (s *selftest) checkStore(ctx, cleanupCtx context.Context, stdout io.Writer) (checkResult, []storecheck.Call) {
	start := s.clk.Now()
	c := checkResult{Name: checkStore}
	out := stdout
	if s.o.json {
		out = io.Discard
	}
	set, meter, remove, err := s.o.openScratch(ctx, out)
	if err != nil {
		c.Ms, c.Detail = s.since(start), fmt.Sprintf("open a scratch directory: %s: look at YDB_CONNECTION_STRING, the YDB_* credentials and the account's ydb.editor role", clip(err.Error(), 300))
		return c, nil
	}
	res := storecheck.Run(ctx, set, s.clk, meter)
	rmErr := remove(cleanupCtx)
	c.Ms, c.figure = s.since(start), msFigure(s.since(start))
	switch {
	case len(res.Failures) > 0:
		c.Detail = fmt.Sprintf("%d of %d calls broke the store's contract: %s", len(res.Failures), len(res.Calls), strings.Join(res.Failures, "; "))
	case rmErr != nil:
		c.Detail = fmt.Sprintf("the scratch directory stays: %v", rmErr)
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("%d calls answered as the contract says", len(res.Calls))
		if !measured(res.Calls) {
			c.Detail += "; the database reported no request units"
		}
	}
	if !s.o.json {
		fmt.Fprint(stdout, unitsTable(res.Calls))
	}
	return c, res.Calls
}

func measured(calls []storecheck.Call) bool {
	for _, c := range calls {
		if c.Units != nil {
			return true
		}
	}
	return false
}

// unitsTable is the probe's calls, one a line: request units measured and
// estimated.
func unitsTable(calls []storecheck.Call) string {
	var b strings.Builder
	fmt.Fprintf(&b, "     %-25s %6s  %s\n", "store call", "RU", "estimate (docs/database.md)")
	for _, c := range calls {
		ru := "—"
		if c.Units != nil {
			ru = fmt.Sprintf("%.0f", *c.Units)
		}
		fmt.Fprintf(&b, "     %-25s %6s  %s\n", c.Name, ru, c.Estimate)
	}
	return b.String()
}
