package ydb

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"transcriber/internal/errs"
	"transcriber/internal/job"
)

// narrowWrite is the UPDATE of Claim, Release or Renew and the columns
// its rule may change, in the statement's order.
type narrowWrite struct {
	stmt    string
	columns []string
}

var (
	claimWrite   = narrowWrite{updateClaim, []string{"claim_id", "claim_until", "next_run_at", "attempts", "updated_at"}}
	releaseWrite = narrowWrite{updateRelease, []string{"attempts", "claim_id", "claim_until", "next_run_at", "error_code", "error_message", "updated_at"}}
	renewWrite   = narrowWrite{updateRenew, []string{"claim_until", "next_run_at"}}
)

// errWideChange: a rule changed what its narrow write would lose (another
// column, the segments, the id): a bug.
var errWideChange = errs.New(errs.Internal, "store_wide_change", "the job store was asked for a change it does not write")

// changedColumns are the columns whose stored values differ.
func changedColumns(cur, next job.Job) []string {
	cur, next = job.Stored(cur), job.Stored(next)
	var out []string
	for _, c := range jobColumnList {
		if c.value(&cur).Yql() != c.value(&next).Yql() {
			out = append(out, c.name)
		}
	}
	return out
}

// params are the UPDATE's parameters from cur (as read) to next (the
// rule's); write is false when nothing changed (a run again after its own
// commit).
func (w narrowWrite) params(cur, next job.Job) (p params, write bool, err error) {
	if next.ID != cur.ID {
		return nil, false, fmt.Errorf("%w: the id moved from %s to %s", errWideChange, cur.ID, next.ID)
	}
	if !reflect.DeepEqual(cur.Segments, next.Segments) {
		return nil, false, fmt.Errorf("%w: job %s: the segments", errWideChange, cur.ID)
	}
	changed := changedColumns(cur, next)
	for _, c := range changed {
		if !slices.Contains(w.columns, c) {
			return nil, false, fmt.Errorf("%w: job %s: column %s", errWideChange, cur.ID, c)
		}
	}
	if len(changed) == 0 {
		return nil, false, nil
	}
	return w.bind(next), true, nil
}

func (w narrowWrite) bind(j job.Job) params {
	j = job.Stored(j)
	p := params{{"$id", utf8(j.ID)}}
	for _, name := range w.columns {
		i := slices.IndexFunc(jobColumnList, func(c rowCol[job.Job, jobRow]) bool { return c.name == name })
		p = append(p, param{"$" + name, jobColumnList[i].value(&j)})
	}
	return p
}

// narrow is the job.Change of Claim, Release and Renew: the row alone read,
// the rule applied, w's columns written. answerSegments reads the
// segments for the answer (Claim's: the step works on them).
func (s *JobStore) narrow(w narrowWrite, answerSegments bool) job.Change {
	return func(ctx context.Context, id string, writeSegments bool, apply func(cur job.Job, now time.Time) (job.Job, error)) (job.Job, error) {
		if writeSegments {
			return job.Job{}, fmt.Errorf("%w: segments", errWideChange)
		}
		return s.applyTx(ctx, id, s.getRow, apply, func(ctx context.Context, tx query.TxActor, cur, next job.Job) (job.Job, error) {
			next = job.Stored(next)
			p, write, err := w.params(cur, next)
			if err == nil && answerSegments {
				next, err = s.withSegments(ctx, tx, next)
			}
			if err == nil && write {
				err = s.db.exec(ctx, tx, w.stmt, p)
			}
			return next, err
		})
	}
}
