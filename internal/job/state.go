package job

import (
	"fmt"
	"slices"
)

// State is where a job is in its life.
type State string

// The states. Failed: success is impossible; Dead: transient errors
// outlasted the attempts.
const (
	AwaitingUpload State = "awaiting_upload"
	Created        State = "created"
	Converted      State = "converted"
	Transcribe     State = "transcribe"
	Done           State = "done"
	Failed         State = "failed"
	Dead           State = "dead"
)

// States in pipeline order.
var States = []State{AwaitingUpload, Created, Converted, Transcribe, Done, Failed, Dead}

// forward is the happy path; a live state may also stay or end Failed or
// Dead. Reuse (reuse.go) ends Done from where the recording became known.
var forward = map[State][]State{
	AwaitingUpload: {Created, Done},
	Created:        {Converted, Done},
	Converted:      {Transcribe},
	Transcribe:     {Done},
}

func (s State) Valid() bool { return slices.Contains(States, s) }

func (s State) Terminal() bool { return s == Done || s == Failed || s == Dead }

func CanMove(from, to State) bool {
	return from.Valid() && to.Valid() && !from.Terminal() &&
		(to == from || to == Failed || to == Dead || slices.Contains(forward[from], to))
}

func checkMove(from, to State) error {
	if !CanMove(from, to) {
		return fmt.Errorf("%w: %s to %s", ErrIllegalMove, from, to)
	}
	return nil
}

// Source is the door a job came in by.
type Source string

const (
	SourceAPI      Source = "api"
	SourceTelegram Source = "telegram"
)

func (s Source) Valid() bool { return s == SourceAPI || s == SourceTelegram }
